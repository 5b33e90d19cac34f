"""The user's side: what a phone does to create updates (send a message, press a button)."""

from __future__ import annotations

import copy
from typing import Any

from . import objects
from .state import TelegramState


def send_text(
    state: TelegramState,
    text: str,
    *,
    user_id: int,
    chat_id: int | None,
    first_name: str,
    username: str | None,
) -> dict[str, Any]:
    """A user writes in a chat (their private chat with the bot unless chat_id says otherwise)."""
    person = objects.user(user_id, first_name, username)
    chat = user_id if chat_id is None else chat_id
    state.chats.chat(chat, person if chat == user_id else None)
    content: dict[str, Any] = {"text": text}
    entities = objects.command_entities(text)
    if entities:
        content["entities"] = entities
    stored = state.chats.add(chat, person, content)
    return state.updates.push("message", copy.deepcopy(stored.payload))


def press_button(
    state: TelegramState,
    message_id: int,
    callback_data: str,
    *,
    user_id: int,
    chat_id: int | None,
    first_name: str,
    username: str | None,
) -> str:
    """A user taps an inline button the bot sent; returns the callback query id.

    Like a real client, it can only press a button that is on the message now.
    """
    chat = user_id if chat_id is None else chat_id
    stored = state.chats.find(chat, message_id)
    if stored is None or stored.record is None:
        raise LookupError(f"the bot has no message {message_id} in chat {chat}")
    buttons = objects.callback_data_in(stored.payload.get("reply_markup"))
    if callback_data not in buttons:
        raise LookupError(
            f"message {message_id} has no button with callback_data {callback_data!r}; "
            f"it has {buttons}"
        )
    query_id = str(4_000_000_000_000_000_000 + next(state.ids))
    query = {
        "id": query_id,
        "from": objects.user(user_id, first_name, username),
        "message": copy.deepcopy(stored.payload),
        "chat_instance": str(-4_000_000_000 - abs(chat)),
        "data": callback_data,
    }
    state.open_callbacks[query_id] = query
    state.updates.push("callback_query", query)
    return query_id
