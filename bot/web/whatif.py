"""GET /receipts/whatif/{amendment}: what a proposed Soul amendment would have changed over
the recorded decisions of the last days, each change with its command (the list the
`/soul propose` card's sentence counts)."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Awaitable, Callable
from pathlib import Path

from aiohttp import web

from bot.web.pages import PageKit
from core.governance.soul_commands import WHAT_IF_DAYS
from core.governance.whatif import WhatIf, what_if_recorded
from core.security.viewer_access import ViewerAccess
from soul import AmendmentError, AmendmentNotFound, SoulStore, amendments, lint_text


def whatif_path(amendment_id: str) -> str:
    """Where the page of one amendment's what-if is."""
    return f"/receipts/whatif/{amendment_id}"


class WhatIfPage:
    """One amendment's effect on the recorded history, behind the viewer's sign-in."""

    def __init__(
        self,
        access: ViewerAccess,
        ledger: Path,
        souls: SoulStore,
        flush: Callable[[], Awaitable[None]],
    ) -> None:
        """`ledger` is the ledger's file (read in a thread, read-only); `flush` writes what
        was appended first."""
        self._pages = PageKit(access)
        self._ledger = ledger
        self._souls = souls
        self._flush = flush

    def routes(self) -> list[web.RouteDef]:
        """GET /receipts/whatif/{amendment_id} (and HEAD)."""
        return [web.get("/receipts/whatif/{amendment_id}", self.page)]

    async def page(self, request: web.Request) -> web.Response:
        """The amendment's changes: would now ask, would now run, would now be refused."""
        if not self._pages.signed_in(request):
            return self._pages.unauthorized("You are not signed in to the receipt viewer.")
        amendment_id = request.match_info["amendment_id"]
        try:
            amendment = amendments.load(self._souls, amendment_id)
        except AmendmentNotFound:
            return self._pages.message(404, "Not found", "There is no amendment with that id.")
        except AmendmentError as exc:
            return self._pages.message(503, "What if", str(exc))
        proposed = lint_text(amendment.proposed_yaml).soul
        if proposed is None:
            return self._pages.message(409, "What if", "The linter rejected this amendment.")
        await self._flush()
        try:
            found = await asyncio.to_thread(what_if_recorded, self._ledger, proposed, WHAT_IF_DAYS)
        except sqlite3.Error as exc:
            return self._pages.message(503, "What if", f"The ledger cannot be read: {exc}")
        sorts = _sorts(found)
        return self._pages.render("whatif.html", amendment=amendment, found=found, sorts=sorts)


def _sorts(found: WhatIf) -> list[tuple[str, int, list[str]]]:
    """Each way a decision would change: its heading, how many, the first few in words."""
    return [
        (title, tally.count, [change.describe() for change in tally.examples])
        for title, tally in (
            ("Would now ask you", found.would_ask),
            ("Would now run without asking", found.would_run),
            ("Would now be refused", found.would_refuse),
        )
    ]
