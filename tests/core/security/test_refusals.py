"""Refusal receipts are bounded: per source, and overall per minute."""

from __future__ import annotations

from typing import Any

from core.receipts.model import Receipt, ReceiptStatus
from core.security.refusals import RefusalLog


class Ledger:
    def __init__(self) -> None:
        self.receipts: list[Receipt] = []

    def append(self, receipt: Receipt) -> None:
        self.receipts.append(receipt)


def refusal_log(**limits: Any) -> tuple[RefusalLog, Ledger, list[float]]:
    now = [0.0]
    ledger = Ledger()
    log = RefusalLog(ledger, clock=lambda: now[0], **limits)  # type: ignore[arg-type]
    return log, ledger, now


def test_one_receipt_per_source_per_hour_counting_the_rest() -> None:
    log, ledger, now = refusal_log()
    for _ in range(5):
        log.record("stranger", "message", "telegram:66", {"sender_id": "66"})
    now[0] = 3601
    log.record("stranger", "message", "telegram:66")

    assert len(ledger.receipts) == 2
    assert ledger.receipts[0].inputs == {"source": "telegram:66", "sender_id": "66"}
    assert ledger.receipts[1].outputs == {"suppressed_since_last": 4}
    assert log.suppressed == 4


def test_a_flood_of_new_strangers_is_capped_per_minute() -> None:
    log, ledger, now = refusal_log(global_per_minute=10)
    for sender in range(1000):
        log.record("stranger", "message", f"telegram:{sender}")
    now[0] = 61
    log.record("stranger", "message", "telegram:new")

    assert len(ledger.receipts) == 11
    assert ledger.receipts[-1].outputs == {"suppressed_since_last": 990}


def test_memory_stays_bounded() -> None:
    log, _, _ = refusal_log(max_sources=100, global_per_minute=10**9)
    for sender in range(10_000):
        log.record("stranger", "message", f"telegram:{sender}")
    assert len(log._last) == 100


def test_a_source_is_quiet_for_exactly_its_hour() -> None:
    log, ledger, now = refusal_log()
    assert log.record("stranger", "message", "telegram:66") is True
    now[0] = 3599.9
    assert log.record("stranger", "message", "telegram:66") is False
    now[0] = 3600.0
    assert log.record("stranger", "message", "telegram:66") is True
    assert [r.status for r in ledger.receipts] == [ReceiptStatus.REFUSED] * 2
    assert [r.action_type for r in ledger.receipts] == ["stranger"] * 2


def test_ten_receipts_a_minute_by_default_and_the_minute_ends_on_time() -> None:
    log, ledger, now = refusal_log()
    now[0] = 40.0
    written = [log.record("stranger", "message", f"telegram:{n}") for n in range(11)]
    assert written == [True] * 10 + [False]
    now[0] = 99.9
    assert log.record("stranger", "message", "telegram:late") is False
    now[0] = 100.0
    assert log.record("stranger", "message", "telegram:later") is True
    assert ledger.receipts[-1].outputs == {"suppressed_since_last": 2}


def test_each_receipt_counts_only_what_was_suppressed_since_the_one_before() -> None:
    log, ledger, now = refusal_log()
    for hour in range(3):
        now[0] = hour * 3600.0
        for _ in range(hour + 2):
            log.record("stranger", "message", "telegram:66")
    assert [r.outputs for r in ledger.receipts] == [
        {"suppressed_since_last": 0},
        {"suppressed_since_last": 1},
        {"suppressed_since_last": 2},
    ]
    assert log.suppressed == 6


def test_the_source_forgotten_first_is_the_one_refused_longest_ago() -> None:
    log, ledger, now = refusal_log(max_sources=2)
    log.record("stranger", "message", "a")
    now[0] = 1.0
    log.record("stranger", "message", "b")
    now[0] = 3600.0
    log.record("stranger", "message", "a")  # a's hour is over: a receipt, a fresh memory
    now[0] = 3601.0
    log.record("stranger", "message", "c")  # room for two: b goes
    now[0] = 3602.0
    assert log.record("stranger", "message", "a") is False
    assert log.record("stranger", "message", "b") is True
    assert [r.inputs["source"] for r in ledger.receipts] == ["a", "b", "a", "c", "b"]


def test_four_thousand_sources_are_remembered_by_default() -> None:
    log, _, _ = refusal_log(global_per_minute=10**9)
    for sender in range(4097):
        log.record("stranger", "message", f"telegram:{sender}")
    assert log.record("stranger", "message", "telegram:0") is True  # the oldest was forgotten
    assert log.record("stranger", "message", "telegram:2") is False
