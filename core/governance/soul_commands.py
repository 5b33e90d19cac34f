"""/soul: the active constitution, its lint status, and amendments decided by owner taps."""

from __future__ import annotations

import asyncio
import difflib
import sqlite3
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import yaml

from core.commands.registry import CommandContext, CommandRegistry, PressContext, Router
from core.events import Button, Card, CardKind
from core.governance.whatif import WhatIf
from core.receipts.base import ReceiptStore
from core.receipts.model import Receipt, ReceiptStatus
from core.security.tokens import ActionTokens
from soul import (
    Amendment,
    AmendmentError,
    AmendmentStatus,
    Soul,
    SoulError,
    SoulStore,
    amendments,
    lint_text,
)

ACTION = "soul.amendment"
USAGE = (
    "/soul propose followed by YAML: either a whole soul, or just the keys to change, e.g.\n"
    "/soul propose approval_rules: {timeout_minutes: 45}"
)


def _merge(base: Any, change: Any) -> Any:
    if isinstance(base, dict) and isinstance(change, dict):
        return {**base, **{k: _merge(base.get(k), v) for k, v in change.items()}}
    return change


def _normalised(text: str) -> list[str]:
    return str(yaml.safe_dump(amendments.meaning(text), sort_keys=True, width=100)).splitlines()


def semantic_diff(base: str, proposed: str) -> str:
    """What really changes (comments and layout aside), as a short unified diff."""
    lines = difflib.unified_diff(
        _normalised(base), _normalised(proposed), "active", "proposed", n=1, lineterm=""
    )
    return "\n".join(lines) or "(no changes)"


def merged_soul_text(active_text: str, proposal: str) -> str:
    """A whole soul from a proposal: itself if whole, else the active soul with the keys
    it names replaced (mappings merge, lists and values replace). Lint decides the rest."""
    try:
        change = yaml.safe_load(proposal)
    except yaml.YAMLError as exc:
        raise ValueError(f"That YAML does not parse: {getattr(exc, 'problem', exc)}") from None
    if not isinstance(change, dict):
        raise ValueError("A soul change must be a YAML mapping of keys to new values.")
    if {"version", "mission", "risk_rules"} <= change.keys():
        return proposal
    merged = _merge(yaml.safe_load(active_text), change)
    return str(yaml.safe_dump(merged, sort_keys=False, allow_unicode=True, width=100))


MAX_DIFF = 3000
WHAT_IF_DAYS = 30  # the recorded history an amendment's card weighs it against


@dataclass
class SoulKeeper:
    """Holds the active Soul; only an activated amendment replaces it."""

    store: SoulStore
    current: Soul = field(init=False)

    def __post_init__(self) -> None:
        self.current = self.store.load_active()

    def __call__(self) -> Soul:
        return self.current


@dataclass
class SoulCommands:
    """Handlers for /soul and its amendment buttons."""

    registry: CommandRegistry
    keeper: SoulKeeper
    tokens: ActionTokens
    ledger: ReceiptStore
    # What a proposed Soul would have changed over the last WHAT_IF_DAYS days of decisions.
    what_if: Callable[[Soul, int], Awaitable[WhatIf]] | None = None
    # The receipt page's list of those changes for an amendment (None: no page is served).
    what_if_url: Callable[[str], str] | None = None

    def register(self) -> None:
        """Add /soul and the amendment buttons."""
        router = Router("soul")
        router.command(
            "soul",
            "the constitution; /soul propose <yaml> to amend it",
            self.soul,
            usage="[propose <yaml>]",
        )
        router.action(ACTION, self.on_press)
        self.registry.include(router)

    async def soul(self, ctx: CommandContext) -> Card:
        """Show the active soul, or propose an amendment."""
        if ctx.args.startswith("propose"):
            return await self._propose(ctx.args.removeprefix("propose").strip(), ctx.receipt_id)
        store, soul = self.keeper.store, self.keeper.current
        report = await asyncio.to_thread(store.report, soul.version)
        waiting = [
            a
            for a in amendments.list_amendments(store)
            if a.status in (AmendmentStatus.PENDING, AmendmentStatus.APPROVED)
        ]
        fields = (
            ("Version", str(soul.version)),
            ("Lint", "passes" if report.ok else "FAILS"),
            ("Approval timeout", f"{soul.approval_rules.timeout_minutes} min"),
            ("Amendments waiting", str(len(waiting))),
        )
        body = soul.mission.strip()
        if store.fallback_reason:
            body += f"\n\nNote: {store.fallback_reason}"
        return Card(CardKind.REPLY, f"Soul v{soul.version}: {soul.name}", body, fields)

    async def _propose(self, text: str, parent_id: str) -> Card:
        if not text:
            return Card(CardKind.REPLY, "Usage", USAGE)
        try:
            full = merged_soul_text(self.keeper.store.text(self.keeper.current.version), text)
        except ValueError as exc:
            return Card(CardKind.REPLY, "Not a soul change", f"{exc}\n\n{USAGE}")
        amendment = await asyncio.to_thread(amendments.propose, self.keeper.store, full)
        self._record("soul_amendment_proposed", amendment.id, str(amendment.status), parent_id)
        if amendment.status is AmendmentStatus.REJECTED and amendment.note == amendments.NO_CHANGE:
            return Card(
                CardKind.REPLY,
                "No change",
                f"That is what soul v{amendment.base_version} already says: nothing to approve."
                f"\n\n{USAGE}",
            )
        if amendment.status is AmendmentStatus.REJECTED:
            return Card(
                CardKind.REPLY, "Amendment rejected by the linter", "\n".join(amendment.findings)
            )
        return await self._card(amendment.id, ("approve", "Approve"), ("reject", "Reject"))

    async def _card(self, amendment_id: str, *choices: tuple[str, str]) -> Card:
        amendment = amendments.load(self.keeper.store, amendment_id)
        card_id = f"soul-{amendment.id}"  # stable, so each step edits the same message
        buttons = []
        for choice, label in choices:
            token = await self.tokens.issue(ACTION, {"id": amendment.id, "choice": choice}, card_id)
            buttons.append(Button(label, token))
        if self.what_if is not None and self.what_if_url is not None:
            buttons.append(Button("See the list", url=self.what_if_url(amendment.id)))
        diff = semantic_diff(amendment.base_yaml, amendment.proposed_yaml)[:MAX_DIFF]
        effect = await self._effect(amendment)
        return Card(
            CardKind.APPROVAL,
            f"Soul amendment {amendment.status.value}",
            f"Against v{amendment.base_version}:\n{diff}{effect}",
            buttons=tuple(buttons),
            correlation_id=card_id,
        )

    async def _effect(self, amendment: Amendment) -> str:
        """What the amendment would have changed in the recorded history, in a sentence
        (after a blank line), or "" when there is nothing to weigh it with."""
        proposed = lint_text(amendment.proposed_yaml).soul
        if self.what_if is None or proposed is None:
            return ""
        try:
            found = await self.what_if(proposed, WHAT_IF_DAYS)
        except (sqlite3.Error, OSError) as exc:
            return f"\n\nWhat it would have changed could not be read from the receipts: {exc}"
        return f"\n\n{found.sentence()}"

    async def on_press(self, ctx: PressContext) -> Card | None:
        """PENDING -> APPROVED -> ACTIVATED, each an owner tap; activation re-lints."""
        store, amendment_id = self.keeper.store, str(ctx.payload["id"])
        choice = ctx.payload.get("choice")
        try:
            if choice == "approve":
                amendments.approve(store, amendment_id)
                follow = await self._card(
                    amendment_id, ("activate", "Activate"), ("reject", "Reject")
                )
                return follow
            if choice == "activate":
                done = await asyncio.to_thread(amendments.activate, store, amendment_id)
                self.keeper.current = store.load_active()
                self._record(
                    "soul_activated", amendment_id, f"v{done.activated_version}", ctx.receipt_id
                )
                return Card(
                    CardKind.NOTICE,
                    f"Soul v{done.activated_version} is active",
                    "The linter passed; the new rules apply from now on.",
                    correlation_id=ctx.card_id,
                )
            amendments.reject(store, amendment_id)
            self._record("soul_amendment_rejected", amendment_id, "rejected", ctx.receipt_id)
            return Card(
                CardKind.NOTICE,
                "Amendment rejected",
                "The active soul is unchanged.",
                correlation_id=ctx.card_id,
            )
        except (AmendmentError, SoulError) as exc:
            self._record(
                "soul_amendment_refused",
                amendment_id,
                str(exc),
                ctx.receipt_id,
                ReceiptStatus.REFUSED,
            )
            return Card(
                CardKind.NOTICE, "Amendment not applied", str(exc), correlation_id=ctx.card_id
            )

    def _record(
        self,
        kind: str,
        amendment_id: str,
        outcome: str,
        parent_id: str | None,
        status: ReceiptStatus = ReceiptStatus.SUCCESS,
    ) -> None:
        self.ledger.append(
            Receipt(
                kind,
                "soul",
                inputs={"amendment_id": amendment_id},
                outputs={"outcome": outcome},
                status=status,
                parent_id=parent_id,
            )
        )
