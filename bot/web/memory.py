"""GET /memory: what Lancelot remembers, read-only, behind the receipt viewer's sign-in.

It shows how much each tier holds, the core blocks, the edits waiting for the owner (decided
in chat with /memory: this page changes nothing), the recent commits and, for `?q=`, the
facts and conversation turns that match. Memory is wired after the web app starts, so the
page is bound to it later (`attach`); until then, or with FEATURE_MEMORY off, it says so.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

from aiohttp import web

from bot.web.pages import PageKit, text_field
from core.clock import spoken_time
from core.memory import Memory
from core.memory.model import Commit, Item, QuarantinedEdit, Turn
from core.security.owner_view import OwnerView
from core.security.viewer_access import ViewerAccess

SHOWN = 20  # commits, held edits and matches listed
PREVIEW = 400
OFF = "Memory is switched off here (FEATURE_MEMORY), so nothing is remembered."


class MemoryPage:
    """The page; `attach` gives it the memory to show."""

    def __init__(self, access: ViewerAccess, owner: OwnerView) -> None:
        self._pages = PageKit(access)
        self._owner = owner  # times in the owner's zone
        self._memory: Memory | None = None

    def attach(self, memory: Memory) -> None:
        """Show this memory from now on."""
        self._memory = memory

    def routes(self) -> list[web.RouteDef]:
        """GET /memory (and HEAD)."""
        return [web.get("/memory", self.page)]

    async def page(self, request: web.Request) -> web.Response:
        """The memory, as the signed-in owner may read it."""
        if not self._pages.signed_in(request):
            return self._pages.unauthorized("You are not signed in to the receipt viewer.")
        memory = self._memory
        if memory is None:
            return self._pages.message(200, "Memory", OFF)
        query = text_field(request.query, "q")
        counts, blocks, held, commits = await asyncio.gather(
            memory.counts(),
            memory.blocks(),
            memory.quarantined(limit=SHOWN),
            memory.recent_commits(limit=SHOWN),
        )
        facts: list[Item] = []
        turns: list[Turn] = []
        if query:
            facts, turns = await asyncio.gather(
                memory.recall(query, limit=SHOWN), memory.search_conversations(query, SHOWN)
            )
        now = datetime.now(UTC)
        return self._pages.render(
            "memory.html",
            counts=counts,
            blocks=[
                {"name": str(name), "version": item.version, "text": _cut(item.text)}
                for name, item in blocks.items()
            ],
            held=[self._held(edit, now) for edit in held],
            commits=[self._commit(commit, now) for commit in commits],
            query=query or "",
            facts=[self._fact(item, now) for item in facts],
            turns=[self._turn(turn, now) for turn in turns],
        )

    def _when(self, at: float, now: datetime) -> str:
        return spoken_time(at, self._owner.zone, now.timestamp())

    def _held(self, edit: QuarantinedEdit, now: datetime) -> dict[str, Any]:
        return {
            "when": self._when(edit.at, now),
            "why": edit.why,
            "by": str(edit.provenance),
            "texts": [f"{c.op}: {_cut(c.text)}" for c in edit.changes],
        }

    def _commit(self, commit: Commit, now: datetime) -> dict[str, Any]:
        return {
            "id": commit.id,
            "when": self._when(commit.at, now),
            "by": str(commit.provenance),
            "reason": commit.reason,
            "undone": commit.undone_by is not None,
            "texts": [f"{c.op}: {_cut(c.text)}" for c in commit.changes],
        }

    def _fact(self, item: Item, now: datetime) -> dict[str, Any]:
        return {
            "tier": str(item.tier),
            "by": str(item.provenance),
            "when": self._when(item.updated_at, now),
            "text": _cut(item.text),
        }

    def _turn(self, turn: Turn, now: datetime) -> dict[str, Any]:
        return {"role": turn.role, "when": self._when(turn.at, now), "text": _cut(turn.text)}


def _cut(text: str) -> str:
    return text if len(text) <= PREVIEW else text[: PREVIEW - 1] + "…"
