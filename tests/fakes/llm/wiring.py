"""Test wiring: a flagship configuration aimed at a fake server, with short backoff."""

from __future__ import annotations

from dataclasses import dataclass

from core.llm.flagship import FlagshipConfig
from core.llm.retry import RetryPolicy
from core.llm.types import Provider

from .anthropic import FakeAnthropic
from .base import FakeModelServer
from .gemini import FakeGemini
from .openai import FakeOpenAI

FAKES: dict[str, type[FakeModelServer]] = {
    "openai": FakeOpenAI,
    "anthropic": FakeAnthropic,
    "gemini": FakeGemini,
}
FAST = "fast-model"
DEEP = "deep-model"
QUICK = RetryPolicy(attempts=3, base_delay=0.01, max_delay=0.05, timeout=10)


def base_url(fake: FakeModelServer) -> str:
    """The base URL the SDK is given (each API roots it differently)."""
    return str(getattr(fake, "base_url"))  # noqa: B009 - every fake has one


def config_for(name: str, fake: FakeModelServer, policy: RetryPolicy = QUICK) -> FlagshipConfig:
    """A flagship configuration aimed at a fake, with short backoff."""
    return FlagshipConfig(
        name=name,
        api_key="test-key-not-real",
        fast_model=FAST,
        deep_model=DEEP,
        base_url=base_url(fake),
        timeout=10,
        retry=policy,
    )


@dataclass
class Wired:
    """A provider, its fake, and its name."""

    name: str
    fake: FakeModelServer
    provider: Provider
