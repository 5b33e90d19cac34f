"""Capped exponential backoff with optional jitter: the one formula every retry loop uses.

Modelled on aiogram's `aiogram/utils/backoff.py`: a frozen BackoffConfig and a Backoff that
iterates over its delays. The jitter here takes a random share off each delay (never adds),
so a delay never exceeds its cap; the random source can be seeded for tests.
"""

from __future__ import annotations

import random
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class BackoffConfig:
    """Delay number n (from 0) is min(max_delay, min_delay * factor**n), less up to a
    `jitter` share of it drawn at random: jitter 0.2 gives a delay between 80% and 100%."""

    min_delay: float
    max_delay: float
    factor: float = 2.0
    jitter: float = 0.0

    def __post_init__(self) -> None:
        if self.min_delay < 0 or self.max_delay < 0:
            raise ValueError("backoff delays cannot be negative")
        if self.factor < 1:
            raise ValueError("a backoff factor below 1 would shrink the delays")
        if not 0 <= self.jitter <= 1:
            raise ValueError("backoff jitter is a share of the delay, from 0 to 1")

    def delay(self, attempt: int, rng: random.Random | None = None) -> float:
        """The delay after failed attempt number `attempt` (0: the first failure).

        `max_delay` caps every delay, the first included. Jitter draws from `rng`, or from
        the `random` module when none is given.
        """
        try:
            grown = self.min_delay * self.factor ** max(0, attempt)
        except OverflowError:  # far past the cap
            grown = self.max_delay
        capped = min(self.max_delay, grown)
        if not self.jitter:
            return capped
        draw = rng.random() if rng is not None else random.random()
        return capped * ((1 - self.jitter) + self.jitter * draw)


class Backoff:
    """The delays of one run of failures, in order: `next()` gives the next delay,
    `reset()` starts over after a success."""

    def __init__(self, config: BackoffConfig, rng: random.Random | None = None) -> None:
        self.config = config
        self._rng = rng
        self._counter = 0

    def __iter__(self) -> Backoff:
        return self

    def __next__(self) -> float:
        delay = self.config.delay(self._counter, self._rng)
        self._counter += 1
        return delay

    def reset(self) -> None:
        """Back to the first delay (after a success)."""
        self._counter = 0
