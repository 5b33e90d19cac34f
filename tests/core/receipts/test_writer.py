"""The ledger's write connection (core/receipts/writer.py): the WAL is copied into ledger.db
every 64 batches, and a copy that a reader holds back is said in the log."""

from __future__ import annotations

import asyncio
import logging
import shutil
import sqlite3
from pathlib import Path

import pytest

from core.errors import StorageError
from core.receipts.ledger import SqliteLedger
from core.receipts.model import Receipt
from core.receipts.redaction import Redactor
from core.receipts.schema import ROWS_PER_INSERT
from core.receipts.writer import ChainWriter

BATCHES = 64  # the writer copies the WAL into ledger.db once every this many batches


def in_file_alone(path: Path, scratch: Path) -> int:
    """How many receipts a copy of `path` holds without its -wal file (a backup that
    missed it): those the WAL was copied back with."""
    copy = scratch / "alone.db"
    copy.unlink(missing_ok=True)
    shutil.copyfile(path, copy)
    db = sqlite3.connect(copy)
    try:
        (count,) = db.execute("SELECT count(*) FROM receipts").fetchone()
    except sqlite3.OperationalError:  # not even the table reached the file yet
        count = 0
    finally:
        db.close()
    return int(count)


async def test_every_64_batches_the_wal_is_copied_into_the_ledger_file(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path, scratch = tmp_path / "home" / "ledger.db", tmp_path / "scratch"
    scratch.mkdir()
    caplog.set_level(logging.WARNING, logger="core.receipts.writer")
    async with SqliteLedger(path) as ledger:
        for i in range(BATCHES - 1):  # one commit, one batch, each
            await ledger.append_durable(Receipt("command", f"step{i}"))
        assert in_file_alone(path, scratch) == 0  # not after every batch: each copy syncs
        await ledger.append_durable(Receipt("command", "the 64th"))
        assert in_file_alone(path, scratch) == BATCHES
        for i in range(BATCHES):
            await ledger.append_durable(Receipt("command", f"more{i}"))
        assert in_file_alone(path, scratch) == 2 * BATCHES
    assert not caplog.records  # each copy was complete


async def test_a_copy_a_reader_holds_back_is_logged_as_incomplete(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "ledger.db"
    async with SqliteLedger(path) as ledger:
        await ledger.append_durable(Receipt("command", "first"))
        reader = sqlite3.connect(path, isolation_level=None)
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM receipts").fetchone()  # holds its snapshot
        with caplog.at_level(logging.WARNING, logger="core.receipts.writer"):
            for i in range(BATCHES - 1):
                await ledger.append_durable(Receipt("command", f"step{i}"))
        reader.execute("COMMIT")
        reader.close()
    (warning,) = [r for r in caplog.records if r.name == "core.receipts.writer"]
    done, frames = warning.args  # type: ignore[misc]
    assert warning.getMessage() == f"ledger WAL checkpoint incomplete ({done} of {frames} pages)"
    assert 0 < int(done) < int(frames)


async def test_a_receipt_repeated_past_a_full_insert_is_stored_once_and_the_rest_in_order(
    tmp_path: Path,
) -> None:
    """The batch's first 128 rows go in before the repeat fails the rest: the failed batch
    is rolled back whole, and tried again without the repeat."""
    async with SqliteLedger(tmp_path / "ledger.db", flush_interval=60) as ledger:
        first = Receipt("command", "first")
        await ledger.append_durable(first)
        batch = [Receipt("command", f"step{i}") for i in range(ROWS_PER_INSERT + 1)]
        for receipt in [*batch, first]:  # one batch: 128 rows, then two
            ledger.append(receipt)
        await asyncio.wait_for(ledger.flush(), 10)
        assert await ledger.count() == 1 + len(batch)
        assert (await ledger.verify()).ok
        assert ledger.healthy
    db = sqlite3.connect(tmp_path / "ledger.db")
    names = [n for (n,) in db.execute("SELECT action_name FROM receipts ORDER BY seq")]
    db.close()
    assert names == ["first", *(r.action_name for r in batch)]


async def test_a_write_to_a_closed_ledger_file_is_a_clear_storage_error(tmp_path: Path) -> None:
    writer = ChainWriter(tmp_path / "ledger.db", Redactor())
    with pytest.raises(StorageError, match=r"^the receipt ledger is not open$"):
        await writer.insert([Receipt("command", "too early")])
    await writer.open()
    assert len(await writer.insert([Receipt("command", "in time")])) == 1
    await writer.close()
    with pytest.raises(StorageError, match=r"^the receipt ledger is not open$"):
        await writer.insert([Receipt("command", "too late")])
