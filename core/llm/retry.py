"""The one place model calls are retried: backoff on transient errors, then ProviderUnavailable."""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from core.errors import PermanentError, ProviderUnavailable, RateLimited, TransientError
from core.runtime.backoff import BackoffConfig

log = logging.getLogger(__name__)

T = TypeVar("T")


class KeyRefused(PermanentError):
    """The provider refused the API key (HTTP 401 or 403)."""


class Unreachable(TransientError):
    """No connection to the provider at all (DNS, refused, reset, a timeout on connect);
    `why` says which, in words."""

    def __init__(self, message: str, why: str = "no connection") -> None:
        super().__init__(message)
        self.why = why

    @classmethod
    def from_error(cls, provider: str, exc: BaseException) -> Unreachable:
        """`provider` could not be reached, saying why as the socket saw it: an SDK's
        transport may call a refused connection a timeout (httpx-aiohttp does)."""
        why = connection_problem(exc)
        return cls(f"{provider}: cannot connect ({why})", why)


def connection_problem(exc: BaseException) -> str:
    """Why a connection failed, in words, from the deepest cause the chain holds: "connection
    refused", "name not found", "connection reset", "timed out", else the error's type."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, ConnectionRefusedError):
            return "connection refused"
        if isinstance(cause, socket.gaierror):
            return "name not found"
        if isinstance(cause, ConnectionResetError):
            return "connection reset"
        cause = cause.__cause__ or cause.__context__
    if "timeout" in type(exc).__name__.lower() or isinstance(exc, TimeoutError):
        return "timed out"
    return type(exc).__name__


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how patiently a provider call is tried."""

    attempts: int = 3
    base_delay: float = 0.5
    max_delay: float = 8.0
    timeout: float = 60.0  # per attempt, on top of the SDK's own timeout

    @property
    def backoff(self) -> BackoffConfig:
        """Doubling from base_delay up to max_delay, each delay less up to half at random."""
        return BackoffConfig(self.base_delay, self.max_delay, jitter=0.5)

    def delay(self, attempt: int, hint: float | None = None) -> float:
        """Seconds to wait before attempt `attempt + 1`: the server's hint, or jittered backoff."""
        if hint is not None:
            return min(hint, self.max_delay)
        return self.backoff.delay(attempt)


async def call_with_retries(
    provider: str,
    policy: RetryPolicy,
    call: Callable[[], Awaitable[T]],
    translate: Callable[[Exception], Exception],
) -> T:
    """Run `call`; retry what `translate` calls transient; raise ProviderUnavailable at the end.

    `translate` turns an SDK exception into a TransientError or a PermanentError (both keep
    the details for the log). No SDK exception leaves this function.
    """
    last: Exception | None = None
    for attempt in range(policy.attempts):
        try:
            async with asyncio.timeout(policy.timeout):
                return await call()
        except TimeoutError as exc:
            last = TransientError(f"{provider}: no answer within {policy.timeout:g} s")
            last.__cause__ = exc
        except Exception as exc:
            last = translate(exc)
            if isinstance(last, PermanentError) or not isinstance(last, TransientError):
                log.warning("%s call failed: %s", provider, last)
                raise _unavailable(provider, last) from last
        log.info("%s attempt %d/%d failed: %s", provider, attempt + 1, policy.attempts, last)
        if attempt + 1 < policy.attempts:
            hint = last.retry_after if isinstance(last, RateLimited) else None
            await asyncio.sleep(policy.delay(attempt, hint))
    log.warning("%s unavailable after %d attempts: %s", provider, policy.attempts, last)
    raise _unavailable(provider, last) from last


def _unavailable(provider: str, cause: Exception | None) -> ProviderUnavailable:
    """The owner-safe error: names the provider (and what to fix, when the owner can)."""
    message = f"The {provider} model is unavailable right now; try again in a moment."
    if isinstance(cause, PermanentError) and cause.user_message != PermanentError.user_message:
        message = cause.user_message
    return ProviderUnavailable(f"{provider}: {cause}", user_message=message)


def error_for_status(provider: str, status: int, retry_after: float | None = None) -> Exception:
    """An HTTP status as the error tree sees it: 408/409/429/5xx are worth another try."""
    if status == 429:
        return RateLimited(retry_after if retry_after is not None else 1.0, f"{provider}: 429")
    if status in (408, 409) or status >= 500:
        return TransientError(f"{provider}: HTTP {status}")
    if status in (401, 403):
        return KeyRefused(
            f"{provider}: HTTP {status}",
            user_message=f"The {provider} API key was refused; check {provider.upper()}_API_KEY.",
        )
    return PermanentError(f"{provider}: HTTP {status}")


def retry_after_seconds(headers: object) -> float | None:
    """The Retry-After header (seconds form) if the server sent one."""
    get = getattr(headers, "get", None)
    raw = get("retry-after") if callable(get) else None
    try:
        return float(raw) if raw is not None else None
    except (TypeError, ValueError):
        return None
