"""The chain walk over one span of seqs (core/receipts/walk.py): every receipt re-hashed
from the one stored before the span; receipts missing, moved or altered named with the seq
they stop at; checkpoints matched or found broken; the hash at a fingerprint's seq kept."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from core.receipts.base import Checkpoint
from core.receipts.ledger import SqliteLedger
from core.receipts.model import Receipt, ReceiptStatus
from core.receipts.walk import walk_span

TIME = "2026-01-01T00:00:00+00:00"


async def ledger_of(path: Path, count: int) -> list[str]:
    """A ledger of `count` receipts; their hashes, by seq from 1."""
    async with SqliteLedger(path) as ledger:
        for number in range(count):
            ledger.append(Receipt("command", f"step{number}", inputs={"n": number}))
        await ledger.flush()
    db = sqlite3.connect(path)
    hashes = [str(row[0]) for row in db.execute("SELECT hash FROM receipts ORDER BY seq")]
    db.close()
    return hashes


def tamper(path: Path, *statements: str) -> None:
    """What an attacker with the file would do: drop the append-only guards, then edit."""
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("DROP TRIGGER IF EXISTS receipts_no_update")
    db.execute("DROP TRIGGER IF EXISTS receipts_no_delete")
    for statement in statements:
        db.execute(statement)
    db.close()


def mark(seq: int, head: str, number: int = 1) -> Checkpoint:
    return Checkpoint(seq, head, TIME, "sig", number=number, previous="")


async def test_spans_walked_apart_say_what_one_walk_would(tmp_path: Path) -> None:
    hashes = await ledger_of(tmp_path / "ledger.db", 10)
    whole = walk_span(tmp_path / "ledger.db", 1, 10, {})
    assert (whole.checked, whole.head, whole.failed) == (10, (10, hashes[9]), False)
    first = walk_span(tmp_path / "ledger.db", 1, 4, {})
    second = walk_span(tmp_path / "ledger.db", 5, 10, {})  # starts from receipt 4's hash
    assert (first.checked, first.head) == (4, (4, hashes[3]))
    assert (second.checked, second.head, second.failed) == (6, (10, hashes[9]), False)
    assert walk_span(tmp_path / "ledger.db", 11, 20, {}).head is None  # past the end


async def test_receipts_missing_are_named_by_their_seqs(tmp_path: Path) -> None:
    hashes = await ledger_of(tmp_path / "ledger.db", 10)
    tamper(tmp_path / "ledger.db", "DELETE FROM receipts WHERE seq IN (4, 5)")
    span = walk_span(tmp_path / "ledger.db", 1, 10, {})
    assert (span.bad_seq, span.reason) == (6, "receipt(s) 4..5 missing before this one")
    assert (span.checked, span.head) == (4, (3, hashes[2]))
    later = walk_span(tmp_path / "ledger.db", 6, 10, {})  # a span past the gap starts at 3
    assert (later.bad_seq, later.reason) == (6, "receipt(s) 4..5 missing before this one")


async def test_a_receipt_moved_or_altered_is_named(tmp_path: Path) -> None:
    await ledger_of(tmp_path / "ledger.db", 6)
    tamper(tmp_path / "ledger.db", "UPDATE receipts SET outputs = '\"forged\"' WHERE seq = 5")
    span = walk_span(tmp_path / "ledger.db", 1, 6, {})
    assert (span.bad_seq, span.reason) == (5, "content does not match its hash (altered)")
    tamper(tmp_path / "ledger.db", "UPDATE receipts SET inputs = X'00ff' WHERE seq = 2")
    span = walk_span(tmp_path / "ledger.db", 1, 6, {})  # bytes no receipt holds: no crash
    assert (span.bad_seq, span.reason) == (2, "content does not match its hash (altered)")


async def test_a_receipt_that_does_not_follow_the_one_before_is_named(tmp_path: Path) -> None:
    hashes = await ledger_of(tmp_path / "ledger.db", 6)
    tamper(tmp_path / "ledger.db", f"UPDATE receipts SET prev_hash = '{hashes[0]}' WHERE seq = 4")
    span = walk_span(tmp_path / "ledger.db", 1, 6, {})
    assert (span.bad_seq, span.reason) == (
        4,
        "does not follow the receipt before it (removed or reordered)",
    )
    assert span.head == (3, hashes[2])


async def test_checkpoints_are_matched_until_one_the_ledger_no_longer_holds(
    tmp_path: Path,
) -> None:
    hashes = await ledger_of(tmp_path / "ledger.db", 8)
    good = [mark(2, hashes[1], 1), mark(2, hashes[1], 2), mark(5, hashes[4], 3)]
    marks = {2: good[:2], 5: good[2:]}
    span = walk_span(tmp_path / "ledger.db", 1, 8, marks, against_seq=6)
    assert (span.matched, span.last_matched, span.failed) == (3, good[2], False)
    assert span.against_hash == hashes[5]
    assert walk_span(tmp_path / "ledger.db", 1, 8, marks).against_hash is None
    broken = mark(7, "ab" * 32, 4)
    span = walk_span(tmp_path / "ledger.db", 1, 8, {**marks, 7: [broken]})
    assert (span.bad_seq, span.broken, span.reason) == (7, broken, None)
    assert (span.matched, span.head) == (3, (6, hashes[5]))


async def test_a_receipt_with_every_field_filled_is_rehashed_from_its_own_columns(
    tmp_path: Path,
) -> None:
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        await ledger.append_durable(
            Receipt(
                "command",
                "status",
                inputs={"asked": 1},
                outputs={"said": 2},
                status=ReceiptStatus.FAILURE,
                duration_ms=12.5,
                token_count=7,
                cognition_tier="T1",
                parent_id="parent-1",
                quest_id="quest-1",
                error_message="it broke",
                metadata={"tier": "T1"},
            )
        )
    span = walk_span(tmp_path / "ledger.db", 1, 1, {})
    assert (span.checked, span.failed, span.reason) == (1, False, None)
