"""When the ledger cannot write (core/receipts/ledger.py): a failed batch is tried again
within a moment and nothing is lost; a refusal names the receipts; a writer that dies of a
bug is named in health, and the text of its error (which may quote receipt data never
redacted) is never logged."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from core.errors import StorageError
from core.receipts import chain
from core.receipts.ledger import SqliteLedger
from core.receipts.model import Receipt
from core.runtime.tasks import Supervisor

# What a failing disk does to every INSERT, as SQLite reports it: an error, nothing stored.
FAULT = (
    "CREATE TRIGGER fault BEFORE INSERT ON receipts BEGIN SELECT RAISE(ABORT, 'disk trouble'); END"
)


async def until(condition: Callable[[], bool], seconds: float = 10.0) -> None:
    """Wait until `condition()` holds; fail the test after `seconds`."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the condition did not hold in time"
        await asyncio.sleep(0.005)


def connect(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, isolation_level=None)


async def test_a_failed_batch_is_tried_again_within_a_moment_and_nothing_is_lost(
    tmp_path: Path,
) -> None:
    path = tmp_path / "ledger.db"
    async with SqliteLedger(path) as ledger:
        await ledger.append_durable(Receipt("command", "before"))
        db = connect(path)
        db.execute(FAULT)
        with pytest.raises(StorageError, match=r"^receipts: not stored: disk trouble"):
            await ledger.append_durable(Receipt("command", "waited"))
        ledger.append(Receipt("command", "queued"))
        assert not ledger.healthy
        db.execute("DROP TRIGGER fault")
        db.close()
        mended = time.monotonic()
        await until(lambda: ledger.healthy)
        # The first retries come a twentieth, then a tenth of a second apart.
        assert time.monotonic() - mended < 0.75
        await ledger.flush()
        assert await ledger.count() == 3
        assert (await ledger.verify()).ok


async def test_a_writer_that_dies_is_named_and_its_error_text_never_logged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    secret = "unredacted-receipt-data-4417"

    def broken(*_: object) -> object:
        raise RuntimeError(f"a bug while chaining {secret}")

    monkeypatch.setattr(chain, "ledger_row", broken)
    supervisor = Supervisor()
    with caplog.at_level(logging.INFO):
        async with SqliteLedger(tmp_path / "ledger.db", tasks=supervisor) as ledger:
            with pytest.raises(StorageError, match=r"^receipts: not stored: the writer stopped"):
                await ledger.append_durable(Receipt("command", "first"))
            assert supervisor.died() == ("ledger-writer",)
    assert "RuntimeError" in caplog.text
    assert secret not in caplog.text


async def test_past_200_000_queued_a_receipt_is_dropped_and_counted(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Memory stays bounded while the disk refuses every write: 200,000 wait, the next is
    # refused (counted, logged), none of it raised at the caller.
    path = tmp_path / "ledger.db"
    async with SqliteLedger(path) as ledger:
        db = connect(path)
        db.execute(FAULT)
        db.close()
        for _ in range(200_000):
            ledger.append(Receipt("command", "queued"))
        assert ledger.dropped == 0
        ledger.append(Receipt("command", "one too many"))
        assert ledger.dropped == 1
        assert ledger.recorded == 200_000
    assert "receipts: not keeping up; an item was dropped" in caplog.text
