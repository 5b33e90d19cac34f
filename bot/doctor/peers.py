"""Checks that ask a peer: each model provider's key (a tiny call through its SDK) and the
clock against a peer's Date (a channel's own checks are in its package)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from urllib.parse import urlsplit

import aiohttp

from bot.doctor.report import Diagnosable, Finding, failed, in_thread, ok, skipped
from core.config import Settings
from core.llm.key_check import KeyProblem, check_key
from core.llm.providers import FLAGSHIPS, KEY_NAMES

SKEW_WARN = 30.0  # seconds; Date headers have a one-second grain, plus the trip
SKEW_NEEDED = 300.0  # signed Google tokens allow about five minutes


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


def clock_peer(settings: Settings, channels: Iterable[Diagnosable] = ()) -> str | None:
    """A configured peer whose HTTP Date the clock is compared with (None: none is): a
    channel's, else a provider's own address."""
    for spec in channels:
        peer = spec.clock_peer(settings)
        if peer is not None:
            return peer
    for provider in provider_names(settings):
        base = getattr(settings.llm, f"{provider}_base_url")
        if base and getattr(settings.llm, f"{provider}_api_key") is not None:
            return str(base)
    return None


async def check_clock(settings: Settings, channels: Iterable[Diagnosable] = ()) -> list[Finding]:
    """This machine's clock against the Date header of a configured peer."""
    peer = clock_peer(settings, channels)
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
