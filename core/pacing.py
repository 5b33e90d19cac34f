"""A token bucket that paces deliveries: a short burst, then a steady rate."""

from __future__ import annotations

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
