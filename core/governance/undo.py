"""Undo from the phone: an Undo button on every applied change, for as long as it can be
taken back, and /undo to list recent changes. Undo restores exactly the prior state, or
refuses and names the files a later change touched. Each undo leaves a receipt."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Protocol

from core.commands.registry import CommandContext, CommandRegistry, PressContext, Router
from core.errors import LancelotError
from core.events import Button, Card, CardKind
from core.receipts.base import ReceiptStore
from core.receipts.model import Receipt, ReceiptStatus
from core.receipts.registry import GovernanceReceipt
from core.security.owner_view import OwnerView
from core.security.tokens import ActionTokens
from core.tools.effects.records import Change

UNDO = "change.undo"
LISTED = 5  # changes /undo shows (each with its own button)


class Changes(Protocol):
    """The applied changes (core.tools.effects.ShellEffects)."""

    async def recent_changes(self, limit: int = 10) -> list[Change]:
        """Changes that can still be undone, newest first."""
        ...

    async def undo(self, change_id: str) -> Change:
        """Put the change's paths back; UndoRefused / UndoUnavailable otherwise."""
        ...


class UndoDesk:
    """The Undo buttons, their handler and /undo."""

    def __init__(
        self,
        changes: Changes,
        tokens: ActionTokens,
        ledger: ReceiptStore,
        owner: OwnerView,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._changes = changes
        self._tokens = tokens
        self._ledger = ledger
        self._owner = owner  # the times, in the owner's zone and words
        self._clock = clock

    def register(self, registry: CommandRegistry) -> None:
        """Add /undo and the Undo button's action."""
        router = Router("undo")
        router.command("undo", "take back a recent change to your files", self.listing)
        router.action(UNDO, self.on_press)
        registry.include(router)

    async def button(self, change_id: str, card_id: str) -> Button | None:
        """An Undo button for a change still in its window (None once it is not)."""
        for change in await self._changes.recent_changes(limit=50):
            if change.id == change_id:
                ttl = max(change.undo_until - self._clock(), 1.0)
                token = await self._tokens.issue(UNDO, {"change": change_id}, card_id, ttl=ttl)
                return Button("Undo", token)
        return None

    async def listing(self, ctx: CommandContext) -> Card:
        """/undo: the recent changes that can still be taken back, newest first."""
        recent = await self._changes.recent_changes(limit=LISTED)
        if not recent:
            return Card(CardKind.REPLY, "Nothing to undo", "No recent change can be undone.")
        card_id = uuid.uuid4().hex  # the card's, which its buttons are bound to
        lines, buttons = [], []
        now = self._clock()
        for n, change in enumerate(recent, 1):
            until = self._owner.until(change.undo_until, now)
            lines.append(
                f"{n}. {self._owner.when(change.applied_at, now)} {change.shown}\n"
                f"   It {change.summary}. Undo until {until}."
            )
            ttl = max(change.undo_until - now, 1.0)
            payload = {"change": change.id}
            token = await self._tokens.issue(UNDO, payload, card_id, ttl=ttl)
            buttons.append(Button(f"Undo {n}", token))
        return Card(
            CardKind.REPLY,
            "Recent changes",
            "\n".join(lines),
            buttons=tuple(buttons),
            correlation_id=card_id,
        )

    async def on_press(self, ctx: PressContext) -> Card:
        """Undo one change: the card says what was put back, or which files stopped it."""
        change_id = str(ctx.payload.get("change", ""))
        try:
            change = await self._changes.undo(change_id)
        except LancelotError as exc:  # UndoRefused (a later change), UndoUnavailable, ...
            self._record(change_id, GovernanceReceipt.UNDO_REFUSED, str(exc), ctx.receipt_id)
            return Card(CardKind.NOTICE, "Not undone", exc.user_message)
        self._record(change_id, GovernanceReceipt.CHANGE_UNDONE, change.summary, ctx.receipt_id)
        return Card(
            CardKind.NOTICE,
            "Undone",
            f"{change.shown}\nEverything is back as it was before this change, which "
            f"{change.summary}.",
        )

    def _record(self, change_id: str, kind: GovernanceReceipt, what: str, parent: str) -> None:
        undone = kind is GovernanceReceipt.CHANGE_UNDONE
        self._ledger.append(
            Receipt(
                action_type=kind,
                action_name="shell.apply",
                inputs={"change": change_id},
                outputs={"outcome": what},
                status=ReceiptStatus.SUCCESS if undone else ReceiptStatus.REFUSED,
                parent_id=parent,
            )
        )
