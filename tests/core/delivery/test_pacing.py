"""Pacing: a burst, then a steady rate, per lane; idle lanes are forgotten; a channel paces
all its chats together and each group chat, never a private chat ahead of time."""

from __future__ import annotations

import pytest

from core.config import load_settings
from core.delivery.pacing import ChannelPacing, LanePacing, TokenBucket
from core.delivery.policy import DeliveryPolicy
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


async def test_a_private_chat_is_not_paced_ahead_of_time() -> None:
    clock = LeapingClock()
    pacing = ChannelPacing(DeliveryPolicy(), clock)
    for _ in range(25):  # a quick back-and-forth never waits on Lancelot's own pacer
        await pacing.take(("telegram", "42"), group=False)
    assert clock.slept == 0


async def test_a_group_chat_gets_twenty_a_minute() -> None:
    clock = LeapingClock()
    pacing = ChannelPacing(DeliveryPolicy(), clock)
    for _ in range(20):
        await pacing.take(("telegram", "-100"), group=True)
    assert clock.slept == 0
    await pacing.take(("telegram", "-100"), group=True)
    assert clock.slept == pytest.approx(3.0)  # 60 s / 20
    await pacing.take(("telegram", "-200"), group=True)  # another group has its own budget
    assert clock.slept == pytest.approx(3.0)


async def test_all_chats_of_a_channel_share_thirty_a_second() -> None:
    clock = LeapingClock()
    pacing = ChannelPacing(DeliveryPolicy(), clock)
    for chat in range(30):
        await pacing.take(("telegram", str(chat)), group=False)
    assert clock.slept == 0
    await pacing.take(("telegram", "30"), group=False)
    assert clock.slept == pytest.approx(1 / 30)
    await pacing.take(("gchat", "spaces/A"), group=False)  # another channel: its own budget
    assert clock.slept == pytest.approx(1 / 30)


async def test_no_pacing_at_all_when_switched_off() -> None:
    clock = LeapingClock()
    pacing = ChannelPacing(DeliveryPolicy(global_rate=0, group_rate=0), clock)
    for _ in range(100):
        await pacing.take(("telegram", "-100"), group=True)
    assert clock.slept == 0


def test_the_limits_come_from_the_delivery_settings() -> None:
    env = {"LANCELOT_DELIVERY_GLOBAL_PER_SECOND": "5", "LANCELOT_DELIVERY_GROUP_PER_MINUTE": "6"}
    paced = load_settings(environ=env).delivery
    policy = DeliveryPolicy.paced(paced.global_per_second, paced.group_per_minute)
    assert (policy.global_rate, policy.global_burst) == (5.0, 5)
    assert (policy.group_rate, policy.group_burst) == (pytest.approx(0.1), 6)
    default = load_settings(environ={}).delivery
    assert (default.global_per_second, default.group_per_minute) == (30.0, 20.0)
