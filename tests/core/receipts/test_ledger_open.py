"""Opening and closing the ledger (core/receipts/ledger.py): a part that cannot be opened
is a StorageError naming it, with nothing left open; a closed ledger holds no file."""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
import threading
from pathlib import Path

import pytest

from core.errors import StorageError
from core.receipts.checkpoints import CHECKPOINTS_FILE
from core.receipts.ledger import SqliteLedger
from core.receipts.model import Receipt
from core.runtime.tasks import Supervisor

from .test_checkpoint_chain import checkpointer


def open_files() -> set[str]:
    """The files this process holds open."""
    found = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            found.add(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:  # the descriptor listdir itself used, closed since
            continue
    return found


def held_under(home: Path) -> list[str]:
    return sorted(f for f in open_files() if f.startswith(str(home)))


async def connection_threads_stopped(before: set[threading.Thread]) -> None:
    """A connect that fails leaves aiosqlite's thread to stop on its own (connections.py):
    wait for those started since `before` while this test's loop still runs, so they have a
    loop to report to."""
    for _ in range(500):
        if not [t for t in set(threading.enumerate()) - before if "connection_worker" in t.name]:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("an aiosqlite thread did not stop within 5 seconds")


async def test_a_search_index_that_cannot_be_made_is_named_and_nothing_stays_open(
    tmp_path: Path,
) -> None:
    (tmp_path / "ledger-search.db").mkdir()
    threads = set(threading.enumerate())
    with pytest.raises(StorageError) as caught:
        await SqliteLedger(tmp_path / "ledger.db").open()
    assert str(caught.value).startswith(
        f"{tmp_path / 'ledger-search.db'}: cannot open the search index: [Errno 21]"
    )
    await connection_threads_stopped(threads)
    assert held_under(tmp_path) == []


async def test_a_checkpoint_file_that_cannot_be_made_is_named_and_nothing_stays_open(
    tmp_path: Path,
) -> None:
    (tmp_path / CHECKPOINTS_FILE).mkdir()
    ledger = SqliteLedger(tmp_path / "ledger.db", checkpoints=checkpointer(tmp_path))
    with pytest.raises(StorageError) as caught:
        await ledger.open()
    assert str(caught.value).startswith(
        f"{tmp_path / 'ledger.db'}: cannot write a checkpoint: [Errno 21]"
    )
    assert held_under(tmp_path) == []


async def test_a_ledger_that_cannot_be_created_is_named_and_nothing_stays_open(
    tmp_path: Path,
) -> None:
    (tmp_path / "ledger.db").mkdir()
    threads = set(threading.enumerate())
    with pytest.raises(StorageError, match=r"ledger\.db: cannot open the receipt ledger"):
        await SqliteLedger(tmp_path / "ledger.db").open()
    await connection_threads_stopped(threads)
    assert held_under(tmp_path) == []


async def test_a_ledger_in_a_folder_not_made_yet_makes_it(tmp_path: Path) -> None:
    path = tmp_path / "new" / "home" / "ledger.db"
    async with SqliteLedger(path) as ledger:
        await ledger.append_durable(Receipt("command", "first"))
    assert path.is_file()


async def test_a_closed_ledger_holds_no_file_open(tmp_path: Path) -> None:
    async with SqliteLedger(tmp_path / "ledger.db", checkpoints=checkpointer(tmp_path)) as ledger:
        await ledger.append_durable(Receipt("command", "first"))
        assert held_under(tmp_path) != []
    assert held_under(tmp_path) == []


def lose_search_index(home: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{home / 'ledger-search.db'}{suffix}").unlink(missing_ok=True)


def indexed(home: Path) -> int:
    db = sqlite3.connect(home / "ledger-search.db")
    try:
        return int(db.execute("SELECT count(*) FROM receipts_fts").fetchone()[0])
    finally:
        db.close()


async def test_closing_a_ledger_never_opened_is_harmless(tmp_path: Path) -> None:
    ledger = SqliteLedger(tmp_path / "ledger.db", checkpoints=checkpointer(tmp_path))
    await ledger.close()
    assert ledger.recorded == 0
    assert held_under(tmp_path) == []


@pytest.mark.parametrize("count", [1, 7])
async def test_a_lost_search_index_is_rebuilt_at_open_without_an_error(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, count: int
) -> None:
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        for i in range(count):
            ledger.append(Receipt("command", f"walrus{i}"))
    lose_search_index(tmp_path)
    supervisor = Supervisor()
    async with SqliteLedger(tmp_path / "ledger.db", tasks=supervisor) as ledger:
        await ledger.flush_search()
        assert await ledger.count_matching("walrus0", 10) == 1
        assert await supervisor.health() is None
    assert indexed(tmp_path) == count
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []


async def test_a_close_does_not_wait_for_the_rebuild_which_goes_on_at_the_next_open(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        for i in range(50):
            ledger.append(Receipt("command", f"walrus{i}"))
    lose_search_index(tmp_path)
    supervisor = Supervisor()
    async with SqliteLedger(tmp_path / "ledger.db", tasks=supervisor):
        pass  # closed at once, while the index is still to be rebuilt
    assert indexed(tmp_path) < 50
    assert supervisor.died() == ()
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        await ledger.flush_search()
    assert indexed(tmp_path) == 50
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []
