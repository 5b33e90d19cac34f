"""A per-sender sliding-window rate limiter with bounded memory."""

from __future__ import annotations

import time
from collections import OrderedDict, deque
from collections.abc import Callable


class SlidingWindowLimiter:
    """Allows at most `limit` hits per key in any `window` seconds.

    Each key keeps the timestamps of its hits inside the window, so a burst is forgiven
    exactly `window` seconds after it happened, not at a fixed-window boundary. Keys are kept
    in order of their latest hit: those idle for a whole window are dropped, and past
    `max_keys` the least recently used one is forgotten (and so starts afresh).
    Not thread-safe; use it from the event loop.
    """

    def __init__(
        self,
        limit: int = 60,
        window: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
        max_keys: int = 10_000,
    ) -> None:
        if limit < 1 or window <= 0 or max_keys < 1:
            raise ValueError("limit and max_keys must be at least 1, window positive")
        self._limit = limit
        self._window = window
        self._clock = clock
        self._max_keys = max_keys
        self._hits: OrderedDict[str, deque[float]] = OrderedDict()

    def __len__(self) -> int:
        """How many keys are being tracked."""
        return len(self._hits)

    def allow(self, key: str) -> bool:
        """Record a hit for `key` and return True, unless that would exceed the limit."""
        now = self._clock()
        self._forget_idle(now)
        hits = self._recent(key, now)
        if len(hits) >= self._limit:
            return False
        hits.append(now)
        self._hits[key] = hits
        self._hits.move_to_end(key)
        while len(self._hits) > self._max_keys:
            self._hits.popitem(last=False)
        return True

    def retry_after(self, key: str) -> float:
        """Seconds until `key` may be allowed again; 0.0 if it may now."""
        now = self._clock()
        hits = self._recent(key, now)
        if len(hits) < self._limit:
            return 0.0
        # The hit that must leave the window before one more fits under the limit.
        return max(0.0, hits[len(hits) - self._limit] + self._window - now)

    def _recent(self, key: str, now: float) -> deque[float]:
        """The key's hits still inside the window (an empty deque for an unknown key)."""
        hits = self._hits.get(key)
        if hits is None:
            return deque()
        cutoff = now - self._window
        while hits and hits[0] <= cutoff:
            hits.popleft()
        if not hits:
            del self._hits[key]
        return hits

    def _forget_idle(self, now: float) -> None:
        """Drop keys whose latest hit has left the window; they sit at the front."""
        cutoff = now - self._window
        while self._hits:
            key, hits = next(iter(self._hits.items()))
            if hits[-1] > cutoff:
                return
            del self._hits[key]
