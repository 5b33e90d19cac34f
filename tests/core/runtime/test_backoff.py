"""One backoff for every retry loop: capped doubling, jitter that only shortens a delay."""

from __future__ import annotations

import random

import pytest

from bot.channels.telegram.application import TelegramTuning
from core.delivery.policy import DeliveryPolicy
from core.llm.retry import RetryPolicy
from core.receipts.ledger import WRITE_RETRY
from core.runtime.backoff import Backoff, BackoffConfig


def test_delays_double_from_the_minimum_up_to_the_cap() -> None:
    config = BackoffConfig(min_delay=0.05, max_delay=5.0)
    assert [config.delay(n) for n in range(9)] == [
        0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 5.0, 5.0
    ]  # fmt: skip


def test_a_thousandth_failure_waits_the_cap_and_does_not_overflow() -> None:
    assert BackoffConfig(1.0, 30.0).delay(5000) == 30.0
    assert BackoffConfig(1.0, 30.0, factor=3.0).delay(5000) == 30.0


def test_the_cap_bounds_even_the_first_delay() -> None:
    assert BackoffConfig(min_delay=10.0, max_delay=8.0).delay(0) == 8.0


def test_jitter_takes_off_at_most_its_share() -> None:
    config = BackoffConfig(min_delay=1.0, max_delay=60.0, jitter=0.2)
    rng = random.Random(1)
    for attempt in range(10):
        full = min(60.0, 2.0**attempt)
        for _ in range(200):
            assert 0.8 * full <= config.delay(attempt, rng) <= full


def test_a_seeded_source_repeats_its_delays() -> None:
    config = BackoffConfig(min_delay=0.5, max_delay=8.0, jitter=0.5)
    first = [config.delay(n, random.Random(42)) for n in range(6)]
    again = [config.delay(n, random.Random(42)) for n in range(6)]
    assert first == again
    assert first != [min(8.0, 0.5 * 2**n) for n in range(6)]


def test_backoff_counts_failures_in_a_row_and_starts_over_after_a_success() -> None:
    backoff = Backoff(BackoffConfig(min_delay=1.0, max_delay=4.0))
    assert [next(backoff) for _ in range(4)] == [1.0, 2.0, 4.0, 4.0]
    backoff.reset()
    assert [next(backoff) for _ in range(2)] == [1.0, 2.0]


def test_an_iterated_backoff_is_seedable() -> None:
    config = BackoffConfig(min_delay=1.0, max_delay=30.0, jitter=1.0)
    one = Backoff(config, random.Random(3))
    two = Backoff(config, random.Random(3))
    assert [next(one) for _ in range(8)] == [next(two) for _ in range(8)]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"min_delay": -1.0, "max_delay": 1.0},
        {"min_delay": 1.0, "max_delay": -1.0},
        {"min_delay": 1.0, "max_delay": 2.0, "factor": 0.5},
        {"min_delay": 1.0, "max_delay": 2.0, "jitter": 1.5},
        {"min_delay": 1.0, "max_delay": 2.0, "jitter": -0.1},
    ],
)
def test_nonsense_is_refused(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError, match="backoff"):
        BackoffConfig(**kwargs)


# The four retry loops keep the delays they had before they shared this helper.


def test_model_calls_wait_half_to_all_of_a_doubling_delay_up_to_8_s() -> None:
    policy = RetryPolicy()
    for attempt in range(8):
        full = min(0.5 * 2.0**attempt, 8.0)
        delays = [policy.delay(attempt) for _ in range(200)]
        assert all(full * 0.5 <= d <= full for d in delays)
    assert policy.delay(0, hint=3.0) == 3.0
    assert policy.delay(0, hint=99.0) == 8.0


def test_deliveries_wait_most_of_a_doubling_delay_up_to_a_minute() -> None:
    policy = DeliveryPolicy()
    for attempts in range(20):
        full = min(60.0, 1.0 * 2.0 ** max(0, attempts - 1))
        delays = [policy.backoff(attempts) for _ in range(200)]
        assert all(full * 0.8 <= d <= full for d in delays)


def test_ledger_writes_retry_after_50_ms_doubling_to_5_s() -> None:
    backoff = Backoff(WRITE_RETRY)
    assert [next(backoff) for _ in range(9)] == [0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 5.0, 5.0]


def test_telegram_polling_retries_after_1_s_doubling_to_5_s() -> None:
    # Capped low: after an outage, the first getUpdates that works is at most 5 s late.
    tuning = TelegramTuning()
    config = BackoffConfig(tuning.poll_backoff_base, tuning.poll_backoff_cap)
    assert [config.delay(n) for n in range(6)] == [1, 2, 4, 5, 5, 5]
