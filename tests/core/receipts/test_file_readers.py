"""Receipts read straight from ledger.db, for `lancelot receipts export` and for replay:
the filters each takes, sequence order, and a file that is only read (nothing in it
changes; a missing one is an error, never created)."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from core.receipts.export import stored_rows
from core.receipts.history import receipt_exists, stored_of_kind
from core.receipts.ledger import SqliteLedger
from core.receipts.model import Receipt


def fingerprint(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
async def ledger_file(tmp_path: Path) -> Path:
    path = tmp_path / "home" / "ledger.db"
    path.parent.mkdir()
    async with SqliteLedger(path) as ledger:
        for n, (kind, quest, at) in enumerate(
            [
                ("tool_call", "q1", "2026-11-01T10:00:00.000000Z"),
                ("reply", "q1", "2026-11-01T10:00:01.000000Z"),
                ("tool_call", "q2", "2026-11-02T09:00:00.000000Z"),
                ("tool_call", None, "2026-11-03T08:00:00.000000Z"),
                ("reply", "q2", "2026-11-03T08:00:01.000000Z"),
            ],
            start=1,
        ):
            ledger.append(Receipt(kind, f"r{n}", quest_id=quest, timestamp=at, id=f"id{n}"))
        await ledger.flush()
    return path


def test_an_export_is_every_field_in_order_and_touches_nothing(ledger_file: Path) -> None:
    before = fingerprint(ledger_file)
    rows = list(stored_rows(ledger_file))
    assert [row[0] for row in rows] == [1, 2, 3, 4, 5]
    assert len(rows[0]) == 17  # every stored column, both hashes
    assert rows[1][16] != rows[1][15]  # its own hash, then the one before it
    assert rows[1][15] == rows[0][16]
    assert fingerprint(ledger_file) == before


def test_an_export_from_to_and_of_one_kind(ledger_file: Path) -> None:
    assert [r[0] for r in stored_rows(ledger_file, first=2)] == [2, 3, 4, 5]
    assert [r[0] for r in stored_rows(ledger_file, first=2, last=4)] == [2, 3, 4]
    assert [r[0] for r in stored_rows(ledger_file, last=1)] == [1]
    assert [r[0] for r in stored_rows(ledger_file, action_type="reply")] == [2, 5]
    assert [r[0] for r in stored_rows(ledger_file, 3, 5, "tool_call")] == [3, 4]


def test_replay_reads_one_kind_by_request_or_from_a_time(ledger_file: Path) -> None:
    names = lambda found: [r.action_name for r in found]  # noqa: E731
    assert names(stored_of_kind(ledger_file, "tool_call")) == ["r1", "r3", "r4"]
    assert names(stored_of_kind(ledger_file, "tool_call", quest_id="q2")) == ["r3"]
    since = "2026-11-02T09:00:00.000000Z"
    assert names(stored_of_kind(ledger_file, "tool_call", since=since)) == ["r3", "r4"]
    assert names(stored_of_kind(ledger_file, "reply", quest_id="q2", since=since)) == ["r5"]
    assert names(stored_of_kind(ledger_file, "reply", quest_id="q1", since=since)) == []
    first = next(stored_of_kind(ledger_file, "reply"))
    assert (first.id, first.seq, first.quest_id) == ("id2", 2, "q1")


def test_a_receipt_is_found_by_its_id(ledger_file: Path) -> None:
    before = fingerprint(ledger_file)
    assert receipt_exists(ledger_file, "id3")
    assert not receipt_exists(ledger_file, "id9")
    assert fingerprint(ledger_file) == before


def test_a_missing_ledger_is_an_error_and_is_not_created(tmp_path: Path) -> None:
    missing = tmp_path / "ledger.db"
    with pytest.raises(sqlite3.OperationalError):
        list(stored_rows(missing))
    with pytest.raises(sqlite3.OperationalError):
        receipt_exists(missing, "id1")
    with pytest.raises(sqlite3.OperationalError):
        list(stored_of_kind(missing, "reply"))
    assert not missing.exists()


async def test_an_export_with_no_end_goes_to_the_last_receipt(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    async with SqliteLedger(path) as ledger:
        for n in range(300):
            ledger.append(Receipt("reply", f"r{n}"))
        await ledger.flush()
    assert [row[0] for row in stored_rows(path, first=2)] == list(range(2, 301))
