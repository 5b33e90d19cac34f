"""/crusader, the word "Crusader" and the Crusader button on /status: the owner switches the
time-boxed mode in which the Soul lets scheduled T2 work run without a card (the policy
engine decides what that means: `PolicyEngine.crusader_approves`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from core.commands.registry import CommandContext, CommandRegistry, PressContext, Router
from core.events import Button, Card, CardKind
from core.governance.crusader import CrusaderMode
from core.receipts.base import ReceiptStore
from core.receipts.model import Receipt
from core.security.tokens import ActionTokens
from soul import Soul

SWITCH = "crusader.switch"
WORD = "crusader"  # the message "Crusader", alone, switches the mode on
SWITCHED_OFF = (
    "Crusader mode is switched off on this install (FEATURE_CRUSADER), so nothing is "
    "auto-approved. /features can switch it back on."
)


@dataclass
class CrusaderCommands:
    """The switch and what it says. `allowed` is FEATURE_CRUSADER, read at every use."""

    registry: CommandRegistry
    crusader: CrusaderMode
    ledger: ReceiptStore
    tokens: ActionTokens
    soul: Callable[[], Soul]
    allowed: Callable[[], bool]

    def register(self) -> None:
        """Add /crusader, the word, and the switch button."""
        router = Router("crusader")
        summary = "Crusader mode: scheduled T2 work runs without a card, time-boxed"
        router.command("crusader", summary, self.command, usage="[on|off]")
        router.word(WORD, "crusader", "on")
        router.action(SWITCH, self.pressed)
        self.registry.include(router)

    def active(self) -> bool:
        """On right now (and not switched off by FEATURE_CRUSADER)."""
        return self.allowed() and self.crusader.active()

    def status(self) -> str:
        """The /status field."""
        if not self.allowed():
            return "switched off (FEATURE_CRUSADER)"
        if self.crusader.active():
            return f"on, {self.crusader.remaining_minutes()} min left"
        return "off"

    async def button(self, card_id: str) -> Button | None:
        """The /status button that flips the mode (none when the feature is off)."""
        if not self.allowed():
            return None
        on = self.crusader.active()
        token = await self.tokens.issue(SWITCH, {"on": not on}, card_id)
        return Button("Crusader off" if on else "Crusader on", token)

    async def command(self, ctx: CommandContext) -> Card:
        """/crusader on|off switches; alone it shows the mode with a button."""
        wanted = ctx.args.strip().lower()
        if not self.allowed():
            return Card(CardKind.NOTICE, "Crusader mode is off", SWITCHED_OFF)
        if wanted in ("on", "off"):
            return await self._switch(wanted == "on", ctx.receipt_id, ctx.event.channel)
        if wanted:
            return Card(CardKind.REPLY, "Usage", "/crusader on, /crusader off, or /crusader")
        card = Card(CardKind.REPLY, "Crusader mode", self._explain())
        button = await self.button(card.correlation_id)
        return Card(
            card.kind,
            card.title,
            card.body,
            buttons=(button,) if button else (),
            correlation_id=card.correlation_id,
        )

    async def pressed(self, ctx: PressContext) -> Card:
        """The button on /status or on the /crusader card."""
        if not self.allowed():
            return Card(
                CardKind.NOTICE, "Crusader mode is off", SWITCHED_OFF, correlation_id=ctx.card_id
            )
        card = await self._switch(bool(ctx.payload.get("on")), ctx.receipt_id, ctx.event.channel)
        return Card(card.kind, card.title, card.body, correlation_id=ctx.card_id)

    def _explain(self) -> str:
        state = self.status()
        return (
            f"Now: {state}.\n{self._what()}\n"
            "Switch it with the button, /crusader on or /crusader off, or just say Crusader."
        )

    def _what(self) -> str:
        soul = self.soul()
        tiers = " and ".join(soul.crusader.auto_approve_tiers) or "no"
        return (
            f"While it is on (at most {soul.crusader.max_duration_minutes} minutes), {tiers} "
            "work runs without a card, scheduled work too, each with a receipt saying "
            "Crusader approved it. T3 and anything the Soul says must be asked still wait "
            "for you."
        )

    async def _switch(self, on: bool, parent_id: str, via: str) -> Card:
        minutes = self.soul().crusader.max_duration_minutes
        await self.crusader.switch(on, minutes)
        self.ledger.append(
            Receipt(
                "crusader",
                "on" if on else "off",
                inputs={"minutes": minutes if on else 0, "via": via},
                parent_id=parent_id,
            )
        )
        if not on:
            return Card(CardKind.NOTICE, "Crusader mode off", "Every action asks as the Soul says.")
        return Card(CardKind.NOTICE, "Crusader mode on", self._what())
