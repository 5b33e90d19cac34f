"""Pacing: a burst, then a steady rate, per lane; idle lanes are forgotten."""

from __future__ import annotations

from core.delivery.pacing import LanePacing, TokenBucket
from tests.fakes.clock import LeapingClock


async def test_a_bucket_lets_a_burst_through_then_paces() -> None:
    clock = LeapingClock()
    bucket = TokenBucket(rate=1.0, burst=3, clock=clock)
    for _ in range(3):
        await bucket.take()
    assert clock.slept == 0
    await bucket.take()
    assert clock.slept == 1.0


async def test_lanes_are_paced_apart_and_idle_ones_forgotten() -> None:
    clock = LeapingClock()
    pacing = LanePacing(rate=1.0, burst=1, clock=clock, keep=2)
    for lane in ("a", "b", "c"):
        await pacing.take(lane)
    assert clock.slept == 0  # each lane has its own burst
    clock.now += 10  # every bucket fills up again
    pacing.forget_idle(busy={"c"})
    assert len(pacing) == 1  # only the busy lane's bucket is kept
    await pacing.take("c")
    await pacing.take("c")
    assert clock.slept == 1.0
    pacing.forget_idle(busy=set())
    assert len(pacing) == 1  # no more than `keep`: nothing to forget
