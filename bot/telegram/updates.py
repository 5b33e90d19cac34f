"""From Telegram updates to bus events, for the owner only.

An update from anyone else reaches nothing: no reply, no bus event, only a bounded receipt
(and, for a button press, the "Not allowed" answer Telegram needs to stop the spinner); a
stranger's file is never downloaded. Everything the owner sends becomes an Inbound, even
what Lancelot does not take (a sticker, an edit): the core answers it.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

from telegram import CallbackQuery, Update, User

from bot.telegram.incoming import NAME, inbound
from bot.telegram.presses import PressAnswers
from core.bus import Bus
from core.events import ButtonPress, MessageRef
from core.security.refusals import RefusalLog

log = logging.getLogger(__name__)

NOT_ALLOWED = "Not allowed"


class UpdateRouter:
    """Checks who sent an update, then publishes it as an Inbound or a ButtonPress."""

    def __init__(
        self, bus: Bus, owners: frozenset[int], presses: PressAnswers, refusals: RefusalLog
    ) -> None:
        self._bus = bus
        self._owners = owners
        self._presses = presses
        self._refusals = refusals

    async def handle(self, update: Update, context: Any = None) -> bool:
        """The one PTB handler: every update passes here. True when it went on the bus
        (which marks it handled in the inbox); False when nothing further handles it."""
        user = update.effective_user
        if user is None or user.is_bot or user.id not in self._owners:
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
