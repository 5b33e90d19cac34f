"""verify_ledger's edges: an empty or newer file, and a long ledger walked in spans."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from core.errors import StorageError
from core.receipts import verify as verify_module
from core.receipts.fingerprints import Fingerprint
from core.receipts.ledger import SqliteLedger
from core.receipts.model import Receipt
from core.receipts.verify import verify_ledger, walk_file


async def ledger_of(path: Path, count: int) -> None:
    async with SqliteLedger(path) as ledger:
        for i in range(count):
            ledger.append(Receipt("command", f"step{i}"))
        await ledger.flush()


async def test_an_empty_ledger_verifies_at_the_chain_start(tmp_path: Path) -> None:
    await ledger_of(tmp_path / "ledger.db", 0)
    report = verify_ledger(tmp_path / "ledger.db")
    assert report.ok
    assert (report.checked, report.checkpoints, report.first_bad_seq) == (0, 0, None)
    assert report.head == "0:0000000000000000"


async def test_an_unreadable_ledger_checked_nothing(tmp_path: Path) -> None:
    (tmp_path / "ledger.db").write_bytes(b"\x00garbage" * 4096)
    report = verify_ledger(tmp_path / "ledger.db")
    assert (report.ok, report.readable, report.checked, report.first_bad_seq) == (
        False,
        False,
        0,
        None,
    )


async def test_a_ledger_from_a_newer_lancelot_is_refused_by_name(tmp_path: Path) -> None:
    await ledger_of(tmp_path / "ledger.db", 2)
    db = sqlite3.connect(tmp_path / "ledger.db")
    db.execute("PRAGMA user_version = 99")
    db.close()
    with pytest.raises(StorageError, match=r"ledger\.db: the ledger schema is version 99, newer"):
        verify_ledger(tmp_path / "ledger.db")


@pytest.mark.parametrize(
    ("count", "processes", "lengths"),
    [
        (10, 3, [10]),
        (11, 3, [4, 4, 3]),
        (40, 2, [20, 20]),
        (40, 3, [14, 14, 12]),
        (45, 9, [6] * 7 + [3]),  # eight at most
        (40, None, [40]),
        (40, 1, [40]),
    ],
)
async def test_a_long_ledger_is_walked_in_spans_that_cover_it_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, count: int, processes: int, lengths: list[int]
) -> None:
    # One span per process (at most MAX_PROCESSES, 8) once more than PARALLEL_FROM receipts
    # follow the first; one walk below that. Together the spans walk every receipt once.
    await ledger_of(tmp_path / "ledger.db", count)
    monkeypatch.setattr(verify_module, "PARALLEL_FROM", 10)
    monkeypatch.setattr(verify_module.os, "cpu_count", lambda: None)  # unknown: one process
    walked = walk_file(tmp_path / "ledger.db", (), None, processes)
    assert [span.checked for span in walked] == lengths
    ends = [sum(lengths[: i + 1]) for i in range(len(lengths))]
    assert [span.head[0] if span.head else None for span in walked] == ends
    assert not any(span.failed for span in walked)


async def test_receipts_after_a_mark_are_walked_from_it(tmp_path: Path) -> None:
    await ledger_of(tmp_path / "ledger.db", 5)
    [after] = walk_file(tmp_path / "ledger.db", (), None, 1, low=4)
    assert (after.checked, after.head is not None and after.head[0]) == (2, 5)
    assert walk_file(tmp_path / "ledger.db", (), None, 1, low=6) == []


def head_of(path: Path, seq: int) -> str:
    db = sqlite3.connect(path)
    (found,) = db.execute("SELECT hash FROM receipts WHERE seq = ?", (seq,)).fetchone()
    db.close()
    return str(found)


async def test_the_empty_ledgers_fingerprint_is_the_chain_start_for_good(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    await ledger_of(path, 0)
    start = verify_ledger(path).head
    assert verify_ledger(path, against=Fingerprint.parse(start)).ok
    await ledger_of(path, 3)
    assert verify_ledger(path, against=Fingerprint.parse(start)).ok
    forged = verify_ledger(path, against=Fingerprint.parse("0:1111111111111111"))
    assert (forged.first_bad_seq, forged.reason) == (
        0,
        "rewritten: receipt #0 is 0:0000000000000000, not the fingerprint 0:1111111111111111",
    )


async def test_a_fingerprint_names_the_receipt_that_differs_or_the_receipts_missing(
    tmp_path: Path,
) -> None:
    path = tmp_path / "ledger.db"
    await ledger_of(path, 9)
    other = verify_ledger(path, against=Fingerprint.parse("4:0123456789abcdef"))
    assert (other.ok, other.first_bad_seq) == (False, 4)
    actual = head_of(path, 4)[:16]
    assert (
        other.reason
        == f"rewritten: receipt #4 is 4:{actual}, not the fingerprint 4:0123456789abcdef"
    )
    beyond = verify_ledger(path, against=Fingerprint.parse("12:0123456789abcdef"))
    assert (beyond.ok, beyond.first_bad_seq) == (False, 10)
    assert beyond.reason == (
        "truncated: the ledger ends at receipt #9, but the fingerprint 12:0123456789abcdef"
        " vouches for 12 receipts"
    )


async def test_a_fingerprint_in_an_early_span_is_found_by_a_walk_in_processes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "ledger.db"
    await ledger_of(path, 30)
    monkeypatch.setattr(verify_module, "PARALLEL_FROM", 10)
    position = Fingerprint.parse(f"5:{head_of(path, 5)[:16]}")
    report = verify_ledger(path, against=position, processes=3)
    assert report.ok, report.reason
    assert report.checked == 30


async def test_the_ledger_s_ends_are_read_without_a_scan(tmp_path: Path) -> None:
    """An incremental verify of the last receipts must not read all ten million first:
    min() and max() in one SELECT scan the table; apart, each is one step of the key."""
    await ledger_of(tmp_path / "ledger.db", 50)
    db = sqlite3.connect(tmp_path / "ledger.db")
    try:
        plan = " ".join(row[3] for row in db.execute(f"EXPLAIN QUERY PLAN {verify_module.ENDS}"))
        assert db.execute(verify_module.ENDS).fetchone() == (1, 50)
    finally:
        db.close()
    assert "SCAN receipts" not in plan


async def test_a_walk_is_bounded_by_the_ends_query(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await ledger_of(tmp_path / "ledger.db", 50)
    monkeypatch.setattr(verify_module, "ENDS", "SELECT 1, 20")  # as if the ledger ended at 20
    spans = walk_file(tmp_path / "ledger.db", [], None, None, low=11)
    assert sum(span.checked for span in spans) == 10
    assert spans[-1].head is not None
    assert spans[-1].head[0] == 20
