"""What model tokens cost: a price table per provider/model, with defaults the settings extend."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from core.llm.types import Usage

# USD per million tokens (input, output). Operators override or add under settings llm.prices.
DEFAULT_PRICES: dict[str, tuple[float, float]] = {
    "openai/gpt-4o-mini": (0.15, 0.60),
    "openai/gpt-4o": (2.50, 10.00),
    "openai/gpt-4.1-mini": (0.40, 1.60),
    "openai/gpt-4.1": (2.00, 8.00),
    "anthropic/claude-3-5-haiku": (0.80, 4.00),
    "anthropic/claude-haiku-4-5": (1.00, 5.00),
    "anthropic/claude-sonnet-4": (3.00, 15.00),
    "anthropic/claude-opus-4": (15.00, 75.00),
    "gemini/gemini-2.5-flash": (0.30, 2.50),
    "gemini/gemini-2.5-pro": (1.25, 10.00),
    "local/*": (0.0, 0.0),
}


@dataclass(frozen=True, slots=True)
class PriceTable:
    """Looks up a model's price: exact key, else the longest listed prefix, else provider/*."""

    prices: Mapping[str, tuple[float, float]]

    @classmethod
    def with_overrides(cls, overrides: Mapping[str, tuple[float, float]]) -> PriceTable:
        """The defaults with the operator's entries on top."""
        return cls({**DEFAULT_PRICES, **overrides})

    def per_million(self, provider: str, model: str) -> tuple[float, float] | None:
        """(input, output) USD per million tokens, or None when the model is not listed.

        Dated names ("gpt-4o-mini-2024-07-18", "claude-sonnet-4-5") match their family key.
        """
        key = f"{provider}/{model}"
        if key in self.prices:
            return self.prices[key]
        family = [k for k in self.prices if key.startswith(k) and not k.endswith("*")]
        if family:
            return self.prices[max(family, key=len)]
        return self.prices.get(f"{provider}/*")

    def ceiling(self, provider: str) -> tuple[float, float]:
        """The dearest listed (input, output) price of `provider` (of any provider when it
        lists none): what an unlisted model counts at where counting too much is the safe side."""
        listed = [p for k, p in self.prices.items() if k.startswith(f"{provider}/")]
        listed = listed or list(self.prices.values())
        return max(p[0] for p in listed), max(p[1] for p in listed)

    def cost(self, provider: str, model: str, usage: Usage) -> float:
        """What `usage` costs in USD (0 for an unlisted model: unknown is not guessed)."""
        price = self.per_million(provider, model)
        if price is None:
            return 0.0
        return (usage.input_tokens * price[0] + usage.output_tokens * price[1]) / 1_000_000
