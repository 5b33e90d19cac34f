"""The per-sender rate limit: a true sliding window with bounded memory."""

from __future__ import annotations

import time
from typing import Any

import pytest

from core.security.ratelimit import SlidingWindowLimiter


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def test_sixty_messages_a_minute_then_refused(clock: FakeClock) -> None:
    limiter = SlidingWindowLimiter(clock=clock)
    allowed = []
    for _ in range(60):
        allowed.append(limiter.allow("alice"))
        clock.advance(0.5)
    assert all(allowed)
    assert not limiter.allow("alice")
    assert not limiter.allow("alice")


def test_refused_attempts_are_not_counted(clock: FakeClock) -> None:
    limiter = SlidingWindowLimiter(limit=2, window=10, clock=clock)
    assert limiter.allow("alice")
    assert limiter.allow("alice")
    for _ in range(50):  # hammering while refused must not push the reopening back
        clock.advance(0.1)
        assert not limiter.allow("alice")
    clock.advance(5.1)  # just past 10 s after the first hits
    assert limiter.allow("alice")


def test_window_slides_instead_of_resetting(clock: FakeClock) -> None:
    limiter = SlidingWindowLimiter(limit=3, window=60, clock=clock)
    assert limiter.allow("bob")  # t=0
    clock.advance(50)
    assert limiter.allow("bob")  # t=50
    assert limiter.allow("bob")  # t=50
    clock.advance(15)  # t=65: a fixed window would have reset; only the t=0 hit expired
    assert limiter.allow("bob")
    assert not limiter.allow("bob")
    clock.advance(44)  # t=109: the t=50 hits are still inside the window
    assert not limiter.allow("bob")
    clock.advance(1)  # t=110: now they expire
    assert limiter.allow("bob")


def test_senders_are_limited_separately(clock: FakeClock) -> None:
    limiter = SlidingWindowLimiter(limit=2, window=60, clock=clock)
    assert limiter.allow("alice")
    assert limiter.allow("alice")
    assert not limiter.allow("alice")
    assert limiter.allow("bob")
    assert limiter.allow("bob")
    assert not limiter.allow("bob")
    assert limiter.retry_after("carol") == 0.0


def test_retry_after_says_when_the_oldest_hit_expires(clock: FakeClock) -> None:
    limiter = SlidingWindowLimiter(limit=2, window=60, clock=clock)
    assert limiter.retry_after("alice") == 0.0
    limiter.allow("alice")  # t=0
    assert limiter.retry_after("alice") == 0.0
    clock.advance(20)
    limiter.allow("alice")  # t=20
    assert limiter.retry_after("alice") == pytest.approx(40.0)
    clock.advance(39.5)
    assert limiter.retry_after("alice") == pytest.approx(0.5)
    assert not limiter.allow("alice")
    clock.advance(0.5)
    assert limiter.retry_after("alice") == 0.0
    assert limiter.allow("alice")
    assert limiter.retry_after("alice") == pytest.approx(20.0)  # now the t=20 hit must go


def test_idle_senders_are_forgotten(clock: FakeClock) -> None:
    limiter = SlidingWindowLimiter(limit=5, window=60, clock=clock)
    for sender in ("alice", "bob", "carol"):
        limiter.allow(sender)
    assert len(limiter) == 3
    clock.advance(61)
    limiter.allow("dave")
    assert len(limiter) == 1


def test_memory_stays_bounded_with_100k_senders(clock: FakeClock) -> None:
    limiter = SlidingWindowLimiter(limit=1, window=3600, clock=clock, max_keys=1000)
    start = time.process_time()
    for n in range(100_000):
        assert limiter.allow(f"sender-{n}")
        clock.advance(0.001)
    elapsed = time.process_time() - start
    assert len(limiter) == 1000
    assert not limiter.allow("sender-99999")  # recent senders are still limited
    assert limiter.allow("sender-0")  # the least recently seen was dropped, so starts afresh
    assert elapsed < 5.0


def test_the_default_clock_is_real_time() -> None:
    limiter = SlidingWindowLimiter(limit=1, window=0.05)
    assert limiter.allow("alice")
    assert not limiter.allow("alice")
    time.sleep(0.06)
    assert limiter.allow("alice")


@pytest.mark.parametrize(
    "arguments", [{"limit": 0}, {"window": 0}, {"window": -1.0}, {"max_keys": 0}]
)
def test_nonsense_settings_are_refused(arguments: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="at least 1"):
        SlidingWindowLimiter(**arguments)


def test_by_default_a_minute_window_over_at_most_10000_senders(clock: FakeClock) -> None:
    limiter = SlidingWindowLimiter(limit=1, clock=clock)
    assert limiter.allow("alice")
    assert limiter.allow("alice") is False
    clock.advance(59.9)
    assert limiter.allow("alice") is False
    clock.advance(0.1)
    assert limiter.allow("alice")
    for n in range(10_001):
        limiter.allow(str(n))
    assert len(limiter) == 10_000


def test_a_sender_hit_again_is_the_last_forgotten(clock: FakeClock) -> None:
    limiter = SlidingWindowLimiter(limit=2, window=60, clock=clock, max_keys=2)
    assert limiter.allow("alice")
    assert limiter.allow("bob")
    assert limiter.allow("alice")  # alice is now the most recent
    assert limiter.allow("carol")  # bob, the least recent, is forgotten
    assert limiter.allow("alice") is False
    assert limiter.allow("bob")


def test_the_smallest_settings_are_allowed_and_smaller_ones_refused(clock: FakeClock) -> None:
    assert SlidingWindowLimiter(limit=1, window=0.001, clock=clock, max_keys=1).allow("a")
    for bad in ({"limit": 0}, {"window": 0}, {"max_keys": 0}):
        with pytest.raises(
            ValueError, match=r"^limit and max_keys must be at least 1, window positive$"
        ):
            SlidingWindowLimiter(clock=clock, **bad)


def test_a_sender_idle_for_a_whole_window_is_forgotten(clock: FakeClock) -> None:
    limiter = SlidingWindowLimiter(limit=1, window=10, clock=clock)
    assert limiter.allow("alice")
    clock.advance(10)  # exactly a window after alice's only hit
    assert limiter.retry_after("alice") == 0.0
    assert len(limiter) == 0  # asking about alice forgot her
    assert limiter.allow("bob")
    clock.advance(10)
    assert limiter.allow("carol")
    assert len(limiter) == 1  # bob, idle a whole window, dropped when carol came
