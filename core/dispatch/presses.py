"""The path of a button press: the token redeemed (owner, card, single use, expiry), then
the action's handler from the router that holds it; its card edited with what it returns."""

from __future__ import annotations

from core.bus import Bus
from core.commands.registry import CommandRegistry, PressContext
from core.dispatch.chain import reply
from core.errors import InvalidToken
from core.events import ButtonPress, Card
from core.receipts.base import ReceiptStore
from core.receipts.model import Receipt, ReceiptStatus
from core.security.tokens import ActionTokens, TokenGrant


class Presses:
    """Turns a `ButtonPress` into its action; bad presses change nothing but a receipt."""

    def __init__(
        self, commands: CommandRegistry, tokens: ActionTokens, bus: Bus, ledger: ReceiptStore
    ) -> None:
        self._commands = commands
        self._tokens = tokens
        self._bus = bus
        self._ledger = ledger

    async def handle(self, event: ButtonPress) -> Card | None:
        """Run the press; a card to send back to the presser (None: the card was edited)."""
        card_id = self._bus.card_of(event.message_ref)
        try:
            which = None if event.arrival is None else f"{event.channel}:{event.arrival}"
            grant = await self._tokens.redeem(
                event.action_token, event.sender_id, card_id, press=which
            )
        except InvalidToken as exc:
            return await self._refuse(event, exc)
        await self._bus.answer_press(event, accepted=True)
        if card_id is None and event.message_ref is not None:
            # A card from before a restart: the message pressed is a copy of it to edit.
            self._bus.remember(grant.card_id, event.message_ref)
        return await self._act(event, grant)

    async def _refuse(self, event: ButtonPress, exc: InvalidToken) -> Card:
        self._ledger.append(
            Receipt(
                action_type="button_refused",
                action_name=exc.reason,
                inputs={"token": event.action_token[:64]},
                status=ReceiptStatus.REFUSED,
                metadata={"channel": event.channel, "sender_id": event.sender_id},
            )
        )
        await self._bus.answer_press(event, accepted=False, note=exc.user_message)
        return reply("Button not accepted", exc.user_message)

    async def _act(self, event: ButtonPress, grant: TokenGrant) -> Card | None:
        press = Receipt(
            action_type="button",
            action_name=grant.action,
            inputs=grant.payload,
            metadata={
                "channel": event.channel,
                "sender_id": event.sender_id,
                "card_id": grant.card_id,
            },
        )
        self._ledger.append(press)
        handler = self._commands.press_handler(grant.action)
        if handler is None:
            return reply("That button no longer does anything.")
        updated = await handler(PressContext(event, grant.payload, grant.card_id, press.id))
        if updated is not None:
            await self._bus.update(grant.card_id, updated)
        return None
