"""Refusal receipts are bounded: per source, and overall per minute."""

from __future__ import annotations

from typing import Any

from core.receipts.model import Receipt
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
