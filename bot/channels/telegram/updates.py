"""From Telegram updates to bus events, for the owner only.

An update from anyone else reaches nothing: no reply, no bus event, only a bounded receipt
(and, for a button press, the "Not allowed" answer Telegram needs to stop the spinner); a
stranger's file is never downloaded. While the channel has no owner yet, a private text
message from anyone goes to the pairing gate instead (bot/pairing.py), which answers it.
Everything the owner sends becomes an Inbound, even what Lancelot does not take (a sticker,
an edit): the core answers it.
"""

from __future__ import annotations

import logging
from dataclasses import replace

from telegram import CallbackQuery, Message, Update, User

from bot.channels.telegram import NAME
from bot.channels.telegram.incoming import inbound
from bot.channels.telegram.presses import PressAnswers
from bot.pairing import PairingGate
from core.bus import Bus
from core.errors import LancelotError
from core.events import ButtonPress, Card, MessageRef
from core.security.refusals import RefusalLog

log = logging.getLogger(__name__)

NOT_ALLOWED = "Not allowed"


class UpdateRouter:
    """Checks who sent an update, then publishes it as an Inbound or a ButtonPress."""

    def __init__(
        self,
        bus: Bus,
        owners: set[int],
        presses: PressAnswers,
        refusals: RefusalLog,
        pairing: PairingGate | None = None,
    ) -> None:
        """`owners` is the channel's own set: an owner who pairs is added to it."""
        self._bus = bus
        self._owners = owners
        self._presses = presses
        self._refusals = refusals
        self._pairing = pairing

    async def handle(self, update: Update) -> bool:
        """Every update passes here. True when it went on the bus (which marks it handled in
        the inbox); False when nothing further handles it."""
        user = update.effective_user
        if user is None or user.is_bot or user.id not in self._owners:
            message = update.message
            if user is not None and message is not None and self._pairs(message):
                await self._knock(message, user)
                return False
            self._refuse(update, user)
            return False
        arrival = update.update_id
        if update.callback_query is not None:
            await self._press(update.callback_query, user, arrival)
        elif update.message is not None:
            await self._bus.publish(replace(inbound(update.message, user), arrival=arrival))
        elif update.edited_message is not None:
            edit = inbound(update.edited_message, user, edited=True)
            await self._bus.publish(replace(edit, arrival=arrival))
        else:
            log.debug("telegram: ignored an update that is not a message from the owner")
            return False
        return True

    async def _press(self, query: CallbackQuery, user: User, arrival: int) -> None:
        message = query.message
        chat_id = str(message.chat.id) if message is not None else str(user.id)
        ref = MessageRef(NAME, chat_id, str(message.message_id)) if message is not None else None
        self._presses.opened(query.id)
        await self._bus.publish(
            ButtonPress(
                NAME,
                str(user.id),
                chat_id,
                ref,
                query.data or "",
                press_id=query.id,
                arrival=arrival,
            )
        )

    def _pairs(self, message: Message) -> bool:
        """Whether a stranger's message goes to pairing: text, in a private chat, while the
        channel has no owner."""
        gate = self._pairing
        private = message.chat.type == "private"
        return gate is not None and not gate.closed and bool(message.text) and private

    async def _knock(self, message: Message, user: User) -> None:
        """A message while pairing: the gate judges it; its answers go to that chat."""
        gate = self._pairing
        assert gate is not None
        chat_id = str(message.chat.id)
        name = " ".join(p for p in (user.first_name, user.last_name) if p)

        async def reply(card: Card) -> None:
            try:
                await self._bus.send(NAME, chat_id, card)
            except LancelotError as exc:
                log.warning("telegram: a pairing answer was not delivered: %s", exc)

        await gate.knock(str(user.id), chat_id, name, message.text or "", reply)

    def _refuse(self, update: Update, user: User | None) -> None:
        chat = update.effective_chat
        kind = "button" if update.callback_query is not None else "message"
        sender = str(user.id) if user is not None else "unknown"
        log.info("telegram: ignored a %s from a stranger", kind)
        self._refusals.record(
            "stranger",
            kind,
            f"{NAME}:{sender}",
            {"channel": NAME, "sender_id": sender, "chat_id": str(chat.id) if chat else None},
        )
        if update.callback_query is not None:
            self._presses.refuse(update.callback_query.id, NOT_ALLOWED)
