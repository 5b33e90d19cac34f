"""GET /receipts/{request}/replay: a request's policy decisions decided again from their
receipts, each beside the one recorded (as `lancelot replay` does, read-only); and GET
/receipts/whatif/{amendment}: what a proposed Soul amendment would have changed over the
recorded decisions of the last days (the list the `/soul propose` card's sentence counts)."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Awaitable, Callable
from pathlib import Path

from aiohttp import web

from bot.web.pages import PageKit
from core.governance.replay import ReplayReport, recorded_souls, replay
from core.governance.soul_commands import WHAT_IF_DAYS
from core.governance.whatif import what_if_recorded
from core.receipts.history import receipt_exists, stored_of_kind
from core.receipts.registry import GovernanceReceipt
from core.security.viewer_access import ViewerAccess
from soul import AmendmentError, AmendmentNotFound, SoulStore, amendments, lint_text

MAX_ID_CHARS = 128
DECISIONS = str(GovernanceReceipt.POLICY_DECISION)


def whatif_path(amendment_id: str) -> str:
    """Where the page of one amendment's what-if is."""
    return f"/receipts/whatif/{amendment_id}"


class ReplayPage:
    """The replay of one request, and an amendment's what-if, behind the viewer's sign-in."""

    def __init__(
        self,
        access: ViewerAccess,
        ledger: Path,
        souls: SoulStore,
        flush: Callable[[], Awaitable[None]],
    ) -> None:
        """`ledger` is the ledger's file (read in a thread, read-only); `flush` writes what
        was appended, so the page sees a decision made a moment ago."""
        self._pages = PageKit(access)
        self._ledger = ledger
        self._souls = souls
        self._flush = flush

    def routes(self) -> list[web.RouteDef]:
        """GET /receipts/{request}/replay and /receipts/whatif/{amendment} (and HEAD)."""
        return [
            web.get("/receipts/{receipt_id}/replay", self.page),
            web.get(whatif_path("{amendment_id}"), self.what_if_page),
        ]

    async def page(self, request: web.Request) -> web.Response:
        """The request's decisions, recorded and decided again, side by side."""
        if not self._pages.signed_in(request):
            return self._pages.unauthorized("You are not signed in to the receipt viewer.")
        root = request.match_info["receipt_id"]
        await self._flush()
        try:
            report = await asyncio.to_thread(self._replay, root)
        except sqlite3.Error as exc:
            return self._pages.message(503, "Replay", f"The ledger cannot be read: {exc}")
        if report is None:
            return self._pages.message(404, "Not found", "There is no receipt with that id.")
        return self._pages.render("replay.html", root=root, report=report)

    def _replay(self, root: str) -> ReplayReport | None:
        """The replay of request `root`, or None when the ledger holds no such receipt."""
        if len(root) > MAX_ID_CHARS or not receipt_exists(self._ledger, root):
            return None
        receipts = stored_of_kind(self._ledger, DECISIONS, quest_id=root)
        return replay(receipts, recorded_souls(self._souls))

    async def what_if_page(self, request: web.Request) -> web.Response:
        """An amendment's changes: would now ask, would now run, would now be refused."""
        if not self._pages.signed_in(request):
            return self._pages.unauthorized("You are not signed in to the receipt viewer.")
        try:
            amendment = amendments.load(self._souls, request.match_info["amendment_id"])
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
        return self._pages.render("whatif.html", amendment=amendment, found=found)
