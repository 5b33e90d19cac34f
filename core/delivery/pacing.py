"""A token bucket that paces deliveries: a short burst, then a steady rate."""

from __future__ import annotations

from collections.abc import Container, Hashable

from core.clock import Clock


class TokenBucket:
    """Lets `burst` events through at once, then `rate` per second on average.

    A rate of 0 (or less) means no pacing at all.
    """

    def __init__(self, rate: float, burst: int, clock: Clock) -> None:
        self._rate = rate
        self._burst = max(1, burst)
        self._clock = clock
        self._tokens = float(self._burst)
        self._stamp = clock.monotonic()

    def _refill(self) -> None:
        now = self._clock.monotonic()
        self._tokens = min(self._burst, self._tokens + (now - self._stamp) * self._rate)
        self._stamp = now

    def delay(self) -> float:
        """Seconds until the next event may go (0.0 when it may go now)."""
        if self._rate <= 0:
            return 0.0
        self._refill()
        return 0.0 if self._tokens >= 1 else (1 - self._tokens) / self._rate

    async def take(self) -> None:
        """Wait for a token and spend it."""
        if self._rate <= 0:
            return
        while (wait := self.delay()) > 0:
            await self._clock.sleep(wait)
        self._tokens -= 1

    @property
    def idle(self) -> bool:
        """Full again: forgetting this bucket would change nothing."""
        return self._rate <= 0 or (self.delay() == 0 and self._tokens >= self._burst)


class LanePacing:
    """One TokenBucket per lane (a chat, say), made when first used. Full buckets of idle
    lanes are forgotten once there are more than `keep`, so memory follows activity."""

    def __init__(self, rate: float, burst: int, clock: Clock, keep: int = 1024) -> None:
        self._rate, self._burst, self._clock, self._keep = rate, burst, clock, keep
        self._buckets: dict[Hashable, TokenBucket] = {}

    async def take(self, lane: Hashable) -> None:
        """Wait for the lane's next token and spend it."""
        bucket = self._buckets.get(lane)
        if bucket is None:
            bucket = self._buckets[lane] = TokenBucket(self._rate, self._burst, self._clock)
        await bucket.take()

    def forget_idle(self, busy: Container[Hashable]) -> None:
        """Drop the full buckets of lanes not in `busy`, if there are more than `keep`."""
        if len(self._buckets) > self._keep:
            for lane in [k for k, b in self._buckets.items() if b.idle and k not in busy]:
                del self._buckets[lane]

    def __len__(self) -> int:
        return len(self._buckets)
