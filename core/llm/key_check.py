"""A live check of a provider key: one tiny completion through the provider's own SDK."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum
from urllib.parse import urlsplit

from core.config.settings import LLMSettings
from core.errors import ProviderUnavailable, TransientError
from core.llm.flagship import FlagshipConfig
from core.llm.providers import KEY_NAMES, build_provider, flagship_config
from core.llm.retry import KeyRefused, RetryPolicy, Unreachable
from core.llm.types import CompletionRequest, Message, Provider, Role

PING = CompletionRequest(messages=(Message(Role.USER, "ping"),), max_tokens=1)


class KeyProblem(StrEnum):
    """Why a key did not answer."""

    MISSING = "missing"  # no key is set for it
    REFUSED = "refused"  # the provider said 401/403
    UNREACHABLE = "unreachable"  # no connection at all
    BUSY = "busy"  # a timeout, 429 or 5xx: there, but not answering
    UNEXPECTED = "unexpected"  # it answered, but not as the SDK expected


@dataclass(frozen=True, slots=True)
class KeyCheck:
    """The outcome for one provider: `problem` None means its key answered."""

    provider: str
    detail: str  # one line, safe to show: never the key
    problem: KeyProblem | None = None

    @property
    def ok(self) -> bool:
        """Whether the key answered."""
        return self.problem is None


def where(config: FlagshipConfig) -> str:
    """The host the key is sent to, for messages."""
    if config.base_url:
        return urlsplit(config.base_url).netloc or config.base_url
    return f"{config.name}'s API"


async def _to_thread(build: Callable[[], Provider]) -> Provider:
    return await asyncio.to_thread(build)


async def check_key(
    llm: LLMSettings,
    provider: str,
    limit: float = 10.0,
    *,
    in_thread: Callable[[Callable[[], Provider]], Awaitable[Provider]] = _to_thread,
) -> KeyCheck:
    """Ask `provider` for one token with its key, once, within `limit` seconds (the SDK's
    timeout and the one attempt's). `in_thread` runs the SDK's import and set-up (the
    doctor's runs in a daemon thread, so a hang cannot keep the process from exiting)."""
    once = RetryPolicy(attempts=1, timeout=limit)
    config = flagship_config(llm, provider, timeout=limit, retry=once)
    if config is None:
        return KeyCheck(provider, f"{KEY_NAMES[provider]} is not set", KeyProblem.MISSING)
    # Importing an SDK takes a while and is no wait on the peer: only the call is timed.
    model = await in_thread(lambda: build_provider(config))
    try:
        await model.complete(PING)
    except ProviderUnavailable as exc:
        return _classified(config, exc.__cause__)
    finally:
        closer = getattr(model, "aclose", None)
        if closer is not None:
            await closer()
    return KeyCheck(provider, f"{config.fast_model} answered at {where(config)}")


def _classified(config: FlagshipConfig, cause: BaseException | None) -> KeyCheck:
    at = where(config)
    if isinstance(cause, KeyRefused):
        return KeyCheck(config.name, f"{at} refused the key ({cause})", KeyProblem.REFUSED)
    if isinstance(cause, Unreachable):
        return KeyCheck(config.name, f"cannot reach {at}: {cause.why}", KeyProblem.UNREACHABLE)
    if isinstance(cause, TransientError):
        detail = f"{at} did not answer in time or is busy ({cause})"
        return KeyCheck(config.name, detail, KeyProblem.BUSY)
    detail = f"{at} answered, but not as expected: {cause}"
    return KeyCheck(config.name, detail, KeyProblem.UNEXPECTED)
