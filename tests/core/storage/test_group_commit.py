"""The one group-commit writer: items queued together share a transaction, each waiter learns
its own outcome once it is on disk, a failed batch is given up or tried again as the owner
chose, and no waiter is left hanging when the writer dies or stops."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.errors import StorageError
from core.runtime.backoff import BackoffConfig
from core.runtime.tasks import Supervisor
from core.storage.connections import connect
from core.storage.group_commit import Batching, GroupCommit


class Notes:
    """A real table written in batches, one transaction each; 'bad' breaks its CHECK and
    so fails the whole batch it is in."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.conn = connect(path)
        self.conn.execute("CREATE TABLE notes (text TEXT NOT NULL CHECK (text != 'bad'))")
        self.batches: list[list[str]] = []

    async def commit(self, items: list[str]) -> list[int]:
        return await asyncio.to_thread(self._commit, items)

    def _commit(self, items: list[str]) -> list[int]:
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            sql = "INSERT INTO notes (text) VALUES (?) RETURNING rowid"
            ids = [int(self.conn.execute(sql, (item,)).fetchone()[0]) for item in items]
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.batches.append(items)
        return ids

    def on_disk(self) -> list[str]:
        """What another connection (a restarted process) reads."""
        other = sqlite3.connect(self.path)
        try:
            return [str(text) for (text,) in other.execute("SELECT text FROM notes")]
        finally:
            other.close()


@pytest.fixture
def notes(tmp_path: Path) -> Iterator[Notes]:
    notes = Notes(tmp_path / "notes.db")
    yield notes
    notes.conn.close()


def writer(notes: Notes, tasks: Supervisor, **batching: object) -> GroupCommit[str, int]:
    commits: GroupCommit[str, int] = GroupCommit(
        notes.commit, what="notes", name="notes-writer", tasks=tasks, batching=Batching(**batching)
    )
    commits.start()
    return commits


async def test_writes_at_once_share_a_commit_and_each_is_on_disk_when_its_caller_hears(
    notes: Notes,
) -> None:
    commits = writer(notes, Supervisor())

    async def put(text: str) -> tuple[int, list[str]]:
        rowid = await commits.write(text)
        return rowid, notes.on_disk()

    seen = await asyncio.gather(*(put(f"n{i}") for i in range(50)))
    await commits.stop()

    assert all(f"n{i}" in disk for i, (_, disk) in enumerate(seen))
    assert sorted(rowid for rowid, _ in seen) == list(range(1, 51))
    assert len(notes.batches) <= 3  # the first alone, the rest together


async def test_appends_gather_until_the_gathering_time_then_commit_together(
    notes: Notes,
) -> None:
    commits = writer(notes, Supervisor(), gather=0.05)
    for i in range(5):
        commits.append(f"n{i}")
    await asyncio.sleep(0.01)
    assert notes.on_disk() == []  # still gathering
    await commits.flush()
    await commits.stop()

    assert notes.batches == [[f"n{i}" for i in range(5)]]


async def test_without_retry_a_failed_batch_fails_its_waiters_and_the_rest_still_land(
    notes: Notes,
) -> None:
    commits = writer(notes, Supervisor())
    results = await asyncio.gather(
        commits.write("good"), commits.write("bad"), return_exceptions=True
    )
    later = await commits.write("later")
    await commits.flush()
    await commits.stop()

    assert all(isinstance(r, StorageError) and "CHECK" in str(r) for r in results)
    assert (later, notes.on_disk()) == (1, ["later"])


async def test_with_retry_a_failed_batch_fails_its_waiters_and_is_tried_again_unasked(
    notes: Notes,
) -> None:
    blocker = sqlite3.connect(notes.path, isolation_level=None)
    blocker.execute("BEGIN EXCLUSIVE")  # another writer holds the file
    notes.conn.execute("PRAGMA busy_timeout=0")
    commits = writer(notes, Supervisor(), retry=BackoffConfig(min_delay=0.01, max_delay=0.05))
    commits.append("appended")
    with pytest.raises(StorageError, match="notes: not stored: database is locked"):
        await commits.write("waited for")
    assert commits.last_error == "database is locked"
    blocker.execute("COMMIT")
    blocker.close()
    await asyncio.sleep(0.5)  # nobody waits or flushes: the backoff alone tries again

    assert notes.on_disk() == ["appended", "waited for"]
    assert commits.last_error is None
    await commits.stop()


async def test_a_failing_after_commit_step_still_tells_waiters_their_item_is_stored(
    notes: Notes,
) -> None:
    async def broken() -> None:
        raise RuntimeError("a bug after the commit")

    tasks = Supervisor()
    commits: GroupCommit[str, int] = GroupCommit(
        notes.commit, what="notes", name="notes-writer", tasks=tasks, after=broken
    )
    commits.start()
    assert await asyncio.wait_for(commits.write("kept"), 5) == 1
    await asyncio.sleep(0)
    assert tasks.died() == ("notes-writer",)
    with pytest.raises(StorageError, match="the writer stopped"):
        await commits.write("after it died")
    assert commits.dropped == 1
    await commits.stop()
    assert notes.on_disk() == ["kept"]
    await tasks.aclose()


async def test_stop_fails_a_waiter_whose_item_could_not_be_committed(notes: Notes) -> None:
    blocker = sqlite3.connect(notes.path, isolation_level=None)
    blocker.execute("BEGIN EXCLUSIVE")
    notes.conn.execute("PRAGMA busy_timeout=0")
    retry = BackoffConfig(min_delay=0.05, max_delay=0.05)
    commits = writer(notes, Supervisor(), retry=retry, most=1)
    first = asyncio.ensure_future(commits.write("first"))
    second = asyncio.ensure_future(commits.write("second"))  # beyond the first batch
    with pytest.raises(StorageError, match="locked"):
        await first
    await asyncio.wait_for(commits.stop(), 5)

    with pytest.raises(StorageError):
        await asyncio.wait_for(second, 1)
    with pytest.raises(StorageError, match="notes: closed"):
        await commits.write("too late")
    blocker.execute("ROLLBACK")
    blocker.close()
