"""/features: every FEATURE_* switch with where its value comes from, and a button to flip
each one. A flip is the owner's own act on their own install: it needs no approval, leaves a
feature_switched receipt and is kept in LANCELOT_HOME/features.env, so it survives a restart."""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, replace

from core.commands.registry import CommandContext, CommandRegistry, PressContext, Router
from core.errors import ConfigError
from core.events import Button, Card, CardKind
from core.features import AT_START, FeatureFlags
from core.receipts.base import ReceiptStore
from core.receipts.model import Receipt, ReceiptStatus
from core.receipts.registry import SwitchReceipt
from core.security.tokens import ActionTokens

log = logging.getLogger(__name__)

TOGGLE = "features.toggle"


@dataclass
class FeatureCommands:
    """The /features card and its toggle buttons."""

    registry: CommandRegistry
    features: FeatureFlags
    tokens: ActionTokens
    ledger: ReceiptStore

    def register(self) -> None:
        """Add /features and its buttons."""
        router = Router("features")
        router.command("features", "the FEATURE_* switches, each with a toggle", self.show)
        router.action(TOGGLE, self.toggle)
        self.registry.include(router)

    async def show(self, ctx: CommandContext) -> Card:
        """Every switch, on or off, and who said so."""
        return await self.card(uuid.uuid4().hex)

    async def card(self, card_id: str, note: str = "") -> Card:
        """The switches card with a fresh button per switch."""
        lines, buttons = [], []
        for name, on in self.features.snapshot().items():  # DEFAULTS' names only
            later = " (applies at the next start)" if name in AT_START else ""
            origin = self.features.origin(name)
            lines.append(f"{name.lower()}: {'on' if on else 'off'} ({origin}){later}")
            payload = {"name": name, "on": not on}
            token = await self.tokens.issue(TOGGLE, payload, card_id)
            buttons.append(Button(f"Turn {'off' if on else 'on'}: {name.lower()}", token))
        kept = self.features.store
        footer = f"A toggle is kept in {kept}." if kept else "Toggles last until Lancelot stops."
        body = "\n".join(lines) + f"\n\n{footer}" + (f"\n\n{note}" if note else "")
        return Card(
            CardKind.REPLY, "Switches", body, buttons=tuple(buttons), correlation_id=card_id
        )

    async def toggle(self, ctx: PressContext) -> Card:
        """Flip one switch, keep it, record it, and show the card again."""
        name = str(ctx.payload["name"])  # issued by card() with every token
        on = bool(ctx.payload.get("on"))
        was = self.features.enabled(name)
        try:
            self.features.set(name, on)
        except (ConfigError, OSError) as exc:
            log.warning("features: could not switch %s: %s", name, exc)
            self._record(name, on, was, ctx, error=str(exc))
            note = f"Could not switch {name.lower()}: the details are in the log."
            return await self.card(ctx.card_id, note)
        self._record(name, on, was, ctx)
        when = "at the next start" if name in AT_START else "now"
        note = f"{name.lower()} is {'on' if on else 'off'}; it applies {when}."
        card = await self.card(ctx.card_id, note)
        return replace(card, title="Switches (changed)")

    def _record(
        self, name: str, on: bool, was: bool, ctx: PressContext, error: str | None = None
    ) -> None:
        self.ledger.append(
            Receipt(
                action_type=SwitchReceipt.TOGGLED,
                action_name=f"FEATURE_{name}",
                inputs={"on": on, "was": was, "via": ctx.event.channel},
                outputs={"kept_in": str(self.features.store or "memory")},
                status=ReceiptStatus.FAILURE if error else ReceiptStatus.SUCCESS,
                error_message=error,
                parent_id=ctx.receipt_id,
                metadata={"applies": "at the next start" if name in AT_START else "now"},
            )
        )
