"""Bot API object shapes (User, Chat, entities, inline keyboards) as Telegram serializes them."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from .errors import bad_request
from .html_check import utf16_len

_COMMAND = re.compile(r"^/[A-Za-z0-9_]{1,64}(@[A-Za-z0-9_]{3,32})?(?=$|\s)")
_INLINE_ACTIONS = (
    "url", "callback_data", "web_app", "login_url", "switch_inline_query",
    "switch_inline_query_current_chat", "switch_inline_query_chosen_chat", "copy_text",
    "callback_game", "pay",
)  # fmt: skip


def user(
    user_id: int, first_name: str, username: str | None = None, *, is_bot: bool = False
) -> dict[str, Any]:
    """A User object; people get a language_code, bots do not."""
    result: dict[str, Any] = {"id": user_id, "is_bot": is_bot, "first_name": first_name}
    if username:
        result["username"] = username
    if not is_bot:
        result["language_code"] = "en"
    return result


def chat_for(chat_id: int, person: dict[str, Any] | None = None) -> dict[str, Any]:
    """A Chat object: private when the id is a user's (positive), a group otherwise."""
    if chat_id > 0:
        chat: dict[str, Any] = {"id": chat_id, "type": "private"}
        source = person or {"first_name": f"User {chat_id}"}
        chat.update({k: source[k] for k in ("first_name", "username") if k in source})
        return chat
    kind = "supergroup" if str(chat_id).startswith("-100") else "group"
    return {"id": chat_id, "title": f"Group {-chat_id}", "type": kind}


def command_entities(text: str) -> list[dict[str, Any]]:
    """A bot_command entity when the text starts with /command, as Telegram adds for users."""
    match = _COMMAND.match(text)
    if match is None:
        return []
    return [{"type": "bot_command", "offset": 0, "length": utf16_len(match.group(0))}]


def check_reply_markup(markup: Any) -> dict[str, Any] | None:
    """Validate a reply_markup; returns the inline keyboard to echo, or None."""
    if markup is None or markup == "":
        return None
    if not isinstance(markup, dict):
        raise bad_request("can't parse reply keyboard markup JSON object")
    if "inline_keyboard" not in markup:
        return None  # reply keyboards and force_reply are accepted but not echoed in Message
    rows = markup["inline_keyboard"]
    if not isinstance(rows, list) or not all(isinstance(row, list) for row in rows):
        raise bad_request('field "inline_keyboard" of the InlineKeyboardMarkup must be an Array')
    checked = [[_check_button(button) for button in row] for row in rows]
    checked = [row for row in checked if row]
    return {"inline_keyboard": checked} if checked else None


def callback_data_in(markup: dict[str, Any] | None) -> list[str]:
    """Every callback_data of an inline keyboard, in reading order."""
    if not markup:
        return []
    rows = markup.get("inline_keyboard", [])
    return [b["callback_data"] for row in rows for b in row if "callback_data" in b]


def _check_button(button: Any) -> dict[str, Any]:
    if not isinstance(button, dict) or not isinstance(button.get("text"), str):
        raise bad_request("can't parse inline keyboard button: Text must be a String")
    actions = [name for name in _INLINE_ACTIONS if name in button]
    if not actions:
        raise bad_request(
            "can't parse inline keyboard button: Text buttons are unallowed in the inline keyboard"
        )
    if "callback_data" in button:
        data = button["callback_data"]
        if not isinstance(data, str) or not 1 <= len(data.encode("utf-8")) <= 64:
            raise bad_request("BUTTON_DATA_INVALID")
    if "url" in button and not _is_button_url(button["url"]):
        raise bad_request("BUTTON_URL_INVALID")
    return dict(button)


def _is_button_url(url: Any) -> bool:
    if not isinstance(url, str):
        return False
    parts = urlsplit(url)
    if parts.scheme in ("http", "https"):
        return bool(parts.hostname)
    return parts.scheme in ("tg", "ton")
