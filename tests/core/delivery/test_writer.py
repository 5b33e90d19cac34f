"""state.db's group commit: writes from many callers share a transaction, each caller learns
the outcome of its own write only once it is on disk, and one bad write spoils no other."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from core.delivery.writer import StateWriter
from core.errors import StorageError


@pytest.fixture
async def writer(tmp_path: Path) -> AsyncIterator[StateWriter]:
    async with StateWriter(tmp_path / "state.db") as writer:
        await writer.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT NOT NULL)")
        yield writer


def on_disk(path: Path) -> dict[int, str]:
    """What another connection (a restarted process) reads."""
    db = sqlite3.connect(path)
    try:
        return {int(k): str(v) for k, v in db.execute("SELECT k, v FROM t")}
    finally:
        db.close()


async def test_writes_made_at_once_share_commits_and_each_is_on_disk_when_awaited(
    writer: StateWriter,
) -> None:
    commits = writer.commits

    async def put(k: int) -> dict[int, str]:
        await writer.execute("INSERT INTO t (k, v) VALUES (?, ?)", (k, f"v{k}"))
        return on_disk(writer.path)  # read the moment this caller is told

    seen = await asyncio.gather(*(put(k) for k in range(200)))

    assert all(k in rows for k, rows in enumerate(seen))
    assert on_disk(writer.path) == {k: f"v{k}" for k in range(200)}
    assert writer.commits - commits <= 3  # the first alone, the rest in one or two batches


async def test_a_failing_write_fails_alone_and_the_rest_of_its_batch_lands(
    writer: StateWriter,
) -> None:
    await writer.execute("INSERT INTO t (k, v) VALUES (1, 'first')")
    returning = "INSERT INTO t (k, v) VALUES (3, 'b') RETURNING k"
    results = await asyncio.gather(
        writer.execute("INSERT INTO t (k, v) VALUES (2, 'a')"),
        writer.execute("INSERT INTO t (k, v) VALUES (1, 'again')"),  # the key exists
        writer.write(lambda conn: conn.execute(returning).fetchall()),
        return_exceptions=True,
    )

    assert results[0] == 1
    assert isinstance(results[1], StorageError)
    assert "UNIQUE" in str(results[1])
    assert results[2] == [(3,)]
    assert on_disk(writer.path) == {1: "first", 2: "a", 3: "b"}


async def test_a_write_whose_caller_gave_up_still_lands(writer: StateWriter) -> None:
    caller = asyncio.create_task(writer.execute("INSERT INTO t (k, v) VALUES (9, 'kept')"))
    await asyncio.sleep(0)
    caller.cancel()
    with pytest.raises(asyncio.CancelledError):
        await caller
    await writer.execute("INSERT INTO t (k, v) VALUES (10, 'after')")

    assert on_disk(writer.path) == {9: "kept", 10: "after"}


async def test_close_commits_what_is_queued_and_then_refuses(tmp_path: Path) -> None:
    writer = StateWriter(tmp_path / "state.db")
    await writer.open()
    await writer.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT NOT NULL)")
    queued = [
        asyncio.create_task(writer.execute("INSERT INTO t (k, v) VALUES (?, 'x')", (k,)))
        for k in range(5)
    ]
    await asyncio.sleep(0)  # queued, not committed yet
    await writer.close()

    assert [await q for q in queued] == [1] * 5
    assert len(on_disk(tmp_path / "state.db")) == 5
    with pytest.raises(StorageError, match="closed"):
        await writer.execute("INSERT INTO t (k, v) VALUES (6, 'late')")


async def test_a_write_that_fails_with_a_bug_fails_its_caller_instead_of_hanging(
    writer: StateWriter,
) -> None:
    with pytest.raises(StorageError, match="writer stopped"):
        await asyncio.wait_for(writer.write(lambda conn: 1 // 0), 5)
    with pytest.raises(StorageError, match="writer stopped"):
        await writer.execute("INSERT INTO t (k, v) VALUES (1, 'after')")
