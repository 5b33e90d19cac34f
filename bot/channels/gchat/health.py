"""Google Chat's health: pushes that keep failing, and Google's certificates out of reach.

There is deliberately no "last receive" staleness check (Telegram's watchdog has one): Chat
calls the endpoint only when the owner writes or clicks, so a silent endpoint is normal.
Reasons start with "gchat:" so that health alerts about Google Chat go to the owner's other
channels (the dead-man's switch); they name an HTTP status or an error class, never a URL
(an incoming webhook's URL carries its key and token) or a message body.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from core.errors import DeliveryFailed, DeliveryRejected, ProviderUnavailable, RateLimited

T = TypeVar("T")

FAILURES_BEFORE_DEGRADED = 3  # one 429 or a lost answer is weather, three in a row are not
CERTS_UNAVAILABLE = "gchat: cannot verify incoming events (Google's certificates unreachable)"


def short_reason(exc: Exception) -> str:
    """What went wrong, without a URL or a response body: push errors read
    "gchat: <call>: <status or error class>[: <body>]", of which the first three parts stay."""
    if isinstance(exc, RateLimited):
        return "rate limited (429)"
    parts = str(exc).split(": ")
    if parts[0] == "gchat":
        parts = parts[1:]
    return ": ".join(parts[:2])[:80] or type(exc).__name__


class PushHealth:
    """Counts pushes (the Chat API or the webhook) failing in a row; degraded once
    FAILURES_BEFORE_DEGRADED have failed and the spell has lasted `failing_after` seconds.
    A permanent refusal (a revoked webhook, a service account without access) counts too:
    the outbox drops those cards, so nothing else would notice."""

    def __init__(self, failing_after: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._failing_after = failing_after
        self._clock = clock
        self._failures = 0
        self._since: float | None = None
        self._last = ""

    async def track(self, call: Awaitable[T]) -> T:
        """Await one push and remember how it went; errors pass through unchanged."""
        try:
            result = await call
        except (DeliveryFailed, DeliveryRejected, RateLimited) as exc:
            self._failures += 1
            if self._since is None:
                self._since = self._clock()
            self._last = short_reason(exc)
            raise
        self._failures, self._since, self._last = 0, None, ""
        return result

    def reason(self) -> str | None:
        """None while pushes work (or have barely started failing)."""
        if self._since is None or self._failures < FAILURES_BEFORE_DEGRADED:
            return None
        if self._clock() - self._since < self._failing_after:
            return None
        # Stable wording while the cause is the same: a changed reason edits the alert card.
        return f"gchat: pushes failing ({self._last})"


async def certificates_reason(fetch: Callable[[], Awaitable[object]]) -> str | None:
    """Degraded when Google's signing certificates cannot be had: no event could be verified
    (every one would get 503). `fetch` is the cache's get, which only goes to the network
    when its copy is stale, and keeps a stale copy when a refresh fails."""
    try:
        await fetch()
    except ProviderUnavailable:
        return CERTS_UNAVAILABLE
    return None
