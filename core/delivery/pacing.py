"""How the outbox paces deliveries, the way python-telegram-bot's AIORateLimiter does: one
budget per channel for all chats together (Telegram: about 30 messages a second), one per
group chat (Telegram: 20 a minute), and none ahead of time for a private chat, where a reply
goes at once and a 429's retry_after (which the outbox honours) is the only brake.

A failed delivery waits out its backoff here too, unless the channel is known to answer
again (`retry_now`): then the backlog goes at once, at the channel-wide pace."""

from __future__ import annotations

import asyncio
from collections.abc import Container, Hashable
from typing import TYPE_CHECKING

from core.clock import Clock

if TYPE_CHECKING:
    from core.delivery.policy import DeliveryPolicy


_HAIR = 1e-9


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
        # Within a hair of a whole token counts as one: a wait shorter than the clock can
        # tell apart would never end.
        return 0.0 if self._tokens >= 1 - _HAIR else (1 - self._tokens) / self._rate

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


class ChannelPacing:
    """The pace of every send: the channel-wide budget, and a group chat's own budget first
    (so a busy group never holds the channel's tokens while it waits)."""

    def __init__(self, policy: DeliveryPolicy, clock: Clock) -> None:
        self._policy, self._clock = policy, clock
        self._channels: dict[str, TokenBucket] = {}
        self._groups = LanePacing(policy.group_rate, policy.group_burst, clock)
        self._answering: dict[str, asyncio.Event] = {}  # set: the channel answers again

    async def wait_to_retry(self, channel: str, delay: float) -> None:
        """Wait `delay` after a failed delivery, or less if `retry_now(channel)` comes first."""
        answering = self._answering.setdefault(channel, asyncio.Event())
        waits: list[asyncio.Future[object]] = [
            asyncio.ensure_future(self._clock.sleep(delay)),
            asyncio.ensure_future(answering.wait()),
        ]
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for wait in waits:
                wait.cancel()

    def retry_now(self, channel: str) -> None:
        """The channel answers again (an outage ended): end every retry wait on it now."""
        answering = self._answering.pop(channel, None)
        if answering is not None:
            answering.set()

    async def take(self, lane: tuple[str, str], *, group: bool) -> None:
        """Wait until a message may go to this (channel, chat) lane, and count it."""
        if group:
            await self._groups.take(lane)
        channel = self._channels.get(lane[0])
        if channel is None:
            policy = self._policy
            channel = self._channels[lane[0]] = TokenBucket(
                policy.global_rate, policy.global_burst, self._clock
            )
        await channel.take()

    def forget_idle(self, busy: Container[Hashable]) -> None:
        """Forget the full budgets of group chats not in `busy` (memory follows activity)."""
        self._groups.forget_idle(busy)
