"""Checks that ask a peer: the Telegram token and webhook, the Google Chat credentials, each
model provider's key (a tiny call through its SDK) and the clock against a peer's Date."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlsplit

import aiohttp

from bot.doctor.report import Finding, Status, failed, in_thread, ok, skipped
from core.config import Settings
from core.errors import StorageError
from core.llm.key_check import KeyProblem, check_key
from core.llm.providers import FLAGSHIPS, KEY_NAMES
from core.security.owners import OwnerStore

CHAT_SCOPE = "https://www.googleapis.com/auth/chat.bot"
SKEW_WARN = 30.0  # seconds; Date headers have a one-second grain, plus the trip
SKEW_NEEDED = 300.0  # signed Google tokens allow about five minutes


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
        findings.append(_paired(settings, "telegram"))
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


def _paired(settings: Settings, channel: str) -> Finding:
    """No owner in the settings: the one who paired, or how to pair (optional: the channel
    runs and asks for the code)."""
    name = "telegram owner" if channel == "telegram" else "google chat owner"
    try:
        owner = OwnerStore(settings.home).get(channel)
    except StorageError as exc:
        return failed(name, str(exc), "remove that file, then pair again")
    if owner is not None:
        return ok(name, f"{owner.owner_id}, paired on {owner.paired_at[:10]}")
    fix = "run `lancelot run` and send the bot the pairing code it prints"
    return failed(
        name, "none yet: the first to send the pairing code becomes it", fix, needed=False
    )


def check_gchat(settings: Settings) -> list[Finding]:
    """The service account file reads and parses as a key; the endpoint has its audience."""
    gc = settings.gchat
    name = "google chat"
    if not (gc.audience or gc.owner_email or gc.service_account_file or gc.webhook_url):
        return [skipped(name, "not configured (GCHAT_AUDIENCE is not set)")]
    if gc.owner_email and not gc.audience:
        fix = "set GCHAT_AUDIENCE to the project number (or the endpoint URL)"
        return [failed(name, "GCHAT_AUDIENCE is not set, so the endpoint is off", fix)]
    if gc.audience and not gc.owner_email:
        owner = _paired(settings, "gchat")
        if owner.status is not Status.OK:
            return [owner]
    if gc.service_account_file is None:
        return [ok(name, f"audience {gc.audience}" if gc.audience else "incoming webhook only")]
    path = gc.service_account_file.expanduser()
    fix = "set GCHAT_SERVICE_ACCOUNT_FILE to the JSON key downloaded for the Chat app"
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        return [failed(name, f"{path}: cannot read ({exc.strerror or exc})", fix)]
    except (json.JSONDecodeError, UnicodeDecodeError):
        return [failed(name, f"{path}: not JSON", fix)]
    from google.oauth2 import service_account

    try:
        credentials = service_account.Credentials.from_service_account_info(  # type: ignore[no-untyped-call]
            info, scopes=[CHAT_SCOPE]
        )
    except (ValueError, TypeError, KeyError) as exc:
        return [failed(name, f"{path}: not a service account key ({exc})", fix)]
    audience = f"; audience {gc.audience}" if gc.audience else ""
    return [ok(name, f"service account {credentials.service_account_email}{audience}")]


def provider_names(settings: Settings) -> list[str]:
    """The providers to check: each with a key, and the one LANCELOT_PROVIDER names."""
    llm = settings.llm
    named = [llm.provider] if llm.provider else []
    keyed = [p for p in FLAGSHIPS if getattr(llm, f"{p}_api_key") is not None]
    return list(dict.fromkeys([*named, *keyed]))


async def check_provider(settings: Settings, provider: str, limit: float) -> list[Finding]:
    """A one-token completion through the provider's own SDK, at its base URL (the check
    onboarding and `lancelot setup` make too: core/llm/key_check.py)."""
    name = f"{provider} key"
    key_name = KEY_NAMES[provider]
    base = key_name.replace("_API_KEY", "_BASE_URL")
    check = await check_key(settings.llm, provider, limit, in_thread=in_thread)
    if check.problem is None:
        return [ok(name, check.detail)]
    if check.problem is KeyProblem.MISSING:
        fix = f"set {key_name}, or LANCELOT_PROVIDER to a provider whose key you have"
        detail = f"LANCELOT_PROVIDER is {provider} but {key_name} is not set"
        return [failed(name, detail, fix)]
    fixes = {
        KeyProblem.REFUSED: f"set {key_name} to a valid key",
        KeyProblem.UNREACHABLE: f"check the network, or {base}",
        KeyProblem.BUSY: f"try again later, or check {base}",
        KeyProblem.UNEXPECTED: f"check {base} and the model names",
    }
    return [failed(name, check.detail, fixes[check.problem])]


def clock_peer(settings: Settings) -> str | None:
    """A configured peer whose HTTP Date the clock is compared with (None: none is)."""
    if settings.telegram.bot_token is not None:
        return settings.telegram.api_base_url
    for provider in provider_names(settings):
        base = getattr(settings.llm, f"{provider}_base_url")
        if base and getattr(settings.llm, f"{provider}_api_key") is not None:
            return str(base)
    if settings.gchat.audience or settings.gchat.service_account_file:
        return settings.gchat.api_base_url
    return None


async def check_clock(settings: Settings) -> list[Finding]:
    """This machine's clock against the Date header of a configured peer."""
    peer = clock_peer(settings)
    if peer is None:
        return [skipped("clock", "no peer configured to compare with")]
    parts = urlsplit(peer)
    origin = f"{parts.scheme}://{parts.netloc}/"
    try:
        async with aiohttp.ClientSession() as session, session.head(origin) as response:
            sent = response.headers.get("Date")
    except aiohttp.ClientError as exc:
        return [
            skipped("clock", f"not compared: {parts.netloc} did not answer ({type(exc).__name__})")
        ]
    if not sent:
        return [skipped("clock", f"not compared: {parts.netloc} sent no Date")]
    theirs = parsedate_to_datetime(sent)
    skew = (datetime.now(UTC) - theirs).total_seconds()
    detail = f"{abs(skew):.0f} s {'ahead of' if skew > 0 else 'behind'} {parts.netloc}"
    if abs(skew) <= SKEW_WARN:
        return [ok("clock", f"within {SKEW_WARN:.0f} s of {parts.netloc}")]
    fix = "turn on time sync (timedatectl set-ntp true)"
    return [failed("clock", detail, fix, needed=abs(skew) > SKEW_NEEDED)]
