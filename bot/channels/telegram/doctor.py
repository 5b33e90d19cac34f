"""`lancelot doctor` on Telegram: getMe proves the token, getWebhookInfo tells the webhook's
state; with no owner in the settings, who paired."""

from __future__ import annotations

import json
import time
from typing import Any
from urllib.parse import urlsplit

import aiohttp

from bot.channels.telegram import NAME
from bot.doctor.owners import check_paired
from bot.doctor.report import Finding, failed, ok, skipped
from core.config import Settings


def _host(url: str) -> str:
    return urlsplit(url).netloc or url


async def _bot_api(
    session: aiohttp.ClientSession, settings: Settings, method: str
) -> tuple[int, dict[str, Any]]:
    """One Bot API call; (HTTP status, JSON body). The URL holds the token: never shown."""
    token = settings.telegram.bot_token
    assert token is not None
    url = f"{settings.telegram.api_base_url}{token.get_secret_value()}/{method}"
    async with session.get(url) as response:
        try:
            body = await response.json(content_type=None)
        except (json.JSONDecodeError, UnicodeDecodeError):
            body = {}
        return response.status, body if isinstance(body, dict) else {}


async def check_telegram(settings: Settings) -> list[Finding]:
    """getMe proves the token; getWebhookInfo tells the webhook's state."""
    tg = settings.telegram
    if tg.bot_token is None:
        return [skipped("telegram", "not configured (TELEGRAM_BOT_TOKEN is not set)")]
    unreachable_fix = "check the network, or TELEGRAM_API_BASE_URL"
    try:
        async with aiohttp.ClientSession() as session:
            status, me = await _bot_api(session, settings, "getMe")
            if status in (401, 404):
                fix = "set TELEGRAM_BOT_TOKEN to the token @BotFather gave the bot"
                why = me.get("description") or "Unauthorized"
                return [failed("telegram token", f"the Bot API refused it ({status} {why})", fix)]
            if status != 200 or not me.get("ok"):
                detail = f"getMe answered HTTP {status} {me.get('description') or ''}".rstrip()
                return [failed("telegram token", detail, unreachable_fix)]
            _, info = await _bot_api(session, settings, "getWebhookInfo")
    except aiohttp.ClientError as exc:
        detail = f"cannot reach {_host(tg.api_base_url)} ({type(exc).__name__})"
        return [failed("telegram token", detail, unreachable_fix)]
    user = me.get("result") or {}
    findings = [
        ok("telegram token", f"@{user.get('username', '?')} ({user.get('first_name', '')})")
    ]
    if not tg.owner_ids:
        findings.append(check_paired(settings, NAME, "telegram owner"))
    findings.append(_webhook(settings, info.get("result") or {}))
    return findings


def _webhook(settings: Settings, info: dict[str, Any]) -> Finding:
    name = "telegram webhook"
    wanted = settings.telegram.webhook_url
    url = str(info.get("url") or "")
    pending = int(info.get("pending_update_count") or 0)
    waiting = f"{pending} update{'s' if pending != 1 else ''} waiting"
    if not wanted:
        if url:
            detail = f"a webhook is set ({url}) but Lancelot polls; `lancelot run` removes it"
            return failed(
                name, detail, "run `lancelot run`, or set TELEGRAM_WEBHOOK_URL", needed=False
            )
        return ok(name, f"none (long polling), {waiting}")
    if url != wanted:
        detail = f"Telegram has {url or 'no webhook'}, not TELEGRAM_WEBHOOK_URL"
        return failed(name, detail, "run `lancelot run` once: it registers the webhook")
    error = info.get("last_error_message")
    if error:
        when = info.get("last_error_date")
        ago = f" {int(time.time() - float(when)) // 60} min ago" if when else ""
        fix = "make TELEGRAM_WEBHOOK_URL reachable from the internet over https"
        return failed(name, f"{url}: the last delivery failed{ago}: {error}; {waiting}", fix)
    return ok(name, f"{url}, {waiting}")
