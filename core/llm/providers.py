"""Builds the flagship provider from the settings, and says honestly when there is none."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from core.config.settings import LLMSettings
from core.llm.flagship import FlagshipConfig
from core.llm.retry import RetryPolicy
from core.llm.types import Completion, CompletionRequest, Provider

FLAGSHIPS = ("openai", "anthropic", "gemini")  # "the first with a key" looks in this order
KEY_NAMES = {name: f"{name.upper()}_API_KEY" for name in FLAGSHIPS}


@dataclass(frozen=True, slots=True)
class FlagshipChoice:
    """The configured flagship (or None) and, when there is none, why."""

    config: FlagshipConfig | None
    problem: str | None = None
    misconfigured: bool = False  # a provider was named but cannot be used (health degrades)


def no_provider_answer(problem: str | None = None, local: bool = False) -> str:
    """The honest reply when free-form reasoning is asked for and no flagship is configured
    (`local`: a local model is there for small jobs)."""
    why = f" ({problem})" if problem else ""
    also = ", and so does my local model for small jobs" if local else ""
    return (
        "I can't reason about free-form requests without a model provider" + why + ". "
        f"Commands still work (/help lists them){also}. "
        "To enable it, run `lancelot setup` in the terminal where I run, or set "
        "LANCELOT_PROVIDER to openai, anthropic or gemini and the matching key "
        "(OPENAI_API_KEY, ANTHROPIC_API_KEY or GEMINI_API_KEY), then restart me."
    )


def keyed_providers(llm: LLMSettings) -> tuple[str, ...]:
    """The providers that have a key, in the order "the first with a key" looks."""
    return tuple(name for name in FLAGSHIPS if _key(llm, name) is not None)


def choose_flagship(llm: LLMSettings, chosen: str | None = None) -> FlagshipChoice:
    """The owner's choice (made in chat) if its key is set; else LANCELOT_PROVIDER if its key
    is set; else the first provider that has a key."""
    if chosen in FLAGSHIPS and _key(llm, chosen) is not None:
        return FlagshipChoice(_config(llm, chosen))
    if llm.provider is not None:
        if _key(llm, llm.provider) is None:
            key = KEY_NAMES[llm.provider]
            problem = f"LANCELOT_PROVIDER is {llm.provider} but {key} is not set"
            return FlagshipChoice(None, problem, misconfigured=True)
        return FlagshipChoice(_config(llm, llm.provider))
    for name in FLAGSHIPS:
        if _key(llm, name) is not None:
            return FlagshipChoice(_config(llm, name))
    return FlagshipChoice(None, "no provider key is set")


class LazyProvider:
    """A flagship adapter built on first use: importing an SDK costs a second of startup."""

    def __init__(self, config: FlagshipConfig) -> None:
        self.name = config.name
        self._config = config
        self._provider: Provider | None = None
        self._building = asyncio.Lock()

    async def complete(self, request: CompletionRequest) -> Completion:
        """Build the adapter if needed (imports in a thread), then answer."""
        async with self._building:
            if self._provider is None:
                self._provider = await asyncio.to_thread(build_provider, self._config)
        return await self._provider.complete(request)

    async def aclose(self) -> None:
        """Close the adapter's connections, if it was ever built."""
        closer = getattr(self._provider, "aclose", None)
        if closer is not None:
            await closer()


def build_provider(config: FlagshipConfig) -> Provider:
    """The SDK adapter for a flagship configuration."""
    if config.name == "openai":
        from core.llm.openai import OpenAIProvider

        return OpenAIProvider(config)
    if config.name == "anthropic":
        from core.llm.anthropic import AnthropicProvider

        return AnthropicProvider(config)
    from core.llm.gemini import GeminiProvider

    return GeminiProvider(config)


def _key(llm: LLMSettings, name: str) -> str | None:
    secret = getattr(llm, f"{name}_api_key")
    value = secret.get_secret_value() if secret is not None else ""
    return value or None


def _config(llm: LLMSettings, name: str) -> FlagshipConfig:
    retry = RetryPolicy(
        attempts=llm.max_attempts,
        base_delay=llm.retry_base_seconds,
        timeout=llm.timeout_seconds + 5,
    )
    config = flagship_config(llm, name, timeout=llm.timeout_seconds, retry=retry)
    assert config is not None
    return config


def flagship_config(
    llm: LLMSettings, name: str, *, timeout: float, retry: RetryPolicy
) -> FlagshipConfig | None:
    """Provider `name` as the settings describe it, or None when it has no key."""
    key = _key(llm, name)
    if key is None:
        return None
    return FlagshipConfig(
        name=name,
        api_key=key,
        fast_model=getattr(llm, f"{name}_fast_model"),
        deep_model=getattr(llm, f"{name}_deep_model"),
        base_url=getattr(llm, f"{name}_base_url"),
        timeout=timeout,
        retry=retry,
    )
