"""Account-level Bot API methods: identity, receiving updates, webhook, commands, callbacks."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urlsplit

from .errors import QUERY_TOO_OLD, bad_request
from .params import Params
from .reply import Method, Reply
from .state import AnsweredCallback
from .state import TelegramState as State
from .updates import Webhook

_COMMAND_NAME = re.compile(r"[a-z0-9_]{1,32}")
_SECRET_TOKEN = re.compile(r"[A-Za-z0-9_-]{1,256}")


async def get_me(state: State, p: Params) -> Any:
    return {
        **state.me,
        "can_join_groups": True,
        "can_read_all_group_messages": False,
        "supports_inline_queries": False,
        "can_connect_to_business": False,
        "has_main_web_app": False,
    }


async def get_updates(state: State, p: Params) -> Any:
    timeout = float(p.values.get("timeout") or 0)
    allowed = p.object("allowed_updates")
    return await state.updates.get_updates(
        p.integer("offset"), p.integer("limit"), timeout, allowed
    )


async def answer_callback_query(state: State, p: Params) -> Any:
    query_id = p.text("callback_query_id") or ""
    text = p.text("text")
    if query_id not in state.open_callbacks:
        raise bad_request(QUERY_TOO_OLD)
    if text is not None and len(text) > 200:
        raise bad_request("MESSAGE_TOO_LONG")
    del state.open_callbacks[query_id]
    answer = AnsweredCallback(
        callback_query_id=query_id, text=text, show_alert=p.flag("show_alert"), url=p.text("url")
    )
    state.answered_callbacks.append(answer)
    return True


async def set_webhook(state: State, p: Params) -> Any:
    url = p.text("url") or ""
    if not url:
        return await delete_webhook(state, p)
    _check_webhook_url(url)
    secret = p.text("secret_token") or None
    if secret is not None and not _SECRET_TOKEN.fullmatch(secret):
        raise bad_request("secret token contains unallowed characters")
    max_connections = p.integer("max_connections") or 40
    state.updates.set_allowed(p.object("allowed_updates"))
    state.updates.set_webhook(Webhook(url, secret, max_connections), p.flag("drop_pending_updates"))
    return Reply(True, "Webhook was set")


async def delete_webhook(state: State, p: Params) -> Any:
    had_webhook = state.updates.webhook is not None
    state.updates.set_webhook(None, p.flag("drop_pending_updates"))
    return Reply(True, "Webhook was deleted" if had_webhook else "Webhook is already deleted")


async def get_webhook_info(state: State, p: Params) -> Any:
    hook = state.updates.webhook
    info: dict[str, Any] = {
        "url": hook.url if hook else "",
        "has_custom_certificate": False,
        "pending_update_count": len(state.updates.pending),
    }
    if hook is not None:
        info.update(max_connections=hook.max_connections, ip_address="127.0.0.1")
        if hook.last_error_date is not None:
            info.update(
                last_error_date=hook.last_error_date, last_error_message=hook.last_error_message
            )
    if state.updates.allowed_updates is not None:
        info["allowed_updates"] = state.updates.allowed_updates
    return info


async def set_my_commands(state: State, p: Params) -> Any:
    commands = p.object("commands")
    if not isinstance(commands, list) or len(commands) > 100:
        raise bad_request("can't parse commands JSON object")
    for command in commands:
        name, about = command.get("command", ""), command.get("description", "")
        if not isinstance(name, str) or not _COMMAND_NAME.fullmatch(name):
            raise bad_request("BOT_COMMAND_INVALID")
        if not isinstance(about, str) or not 1 <= len(about) <= 256:
            raise bad_request("BOT_COMMAND_DESCRIPTION_INVALID")
    state.commands[_commands_key(p)] = [
        {"command": c["command"], "description": c["description"]} for c in commands
    ]
    return True


async def get_my_commands(state: State, p: Params) -> Any:
    return list(state.commands.get(_commands_key(p), []))


async def delete_my_commands(state: State, p: Params) -> Any:
    state.commands.pop(_commands_key(p), None)
    return True


def _commands_key(p: Params) -> tuple[str, str]:
    scope = p.object("scope") or {"type": "default"}
    return json.dumps(scope, sort_keys=True), p.text("language_code") or ""


def _check_webhook_url(url: str) -> None:
    """Telegram wants HTTPS on a public host; the fake also takes plain HTTP on loopback."""
    parts = urlsplit(url)
    if not parts.hostname:
        raise bad_request("bad webhook: Failed to resolve host: Name or service not known")
    loopback = parts.hostname in ("127.0.0.1", "localhost", "::1")
    if parts.scheme != "https" and not (loopback and parts.scheme == "http"):
        raise bad_request("bad webhook: An HTTPS URL must be provided for webhook")


METHODS: dict[str, Method] = {
    "getme": get_me,
    "getupdates": get_updates,
    "answercallbackquery": answer_callback_query,
    "setwebhook": set_webhook,
    "deletewebhook": delete_webhook,
    "getwebhookinfo": get_webhook_info,
    "setmycommands": set_my_commands,
    "getmycommands": get_my_commands,
    "deletemycommands": delete_my_commands,
}
