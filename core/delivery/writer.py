"""Group commit for state.db's delivery writes (the outbox and the inbox).

Callers queue a write (a function of a sqlite3 connection) and await it; the storage
engine's group commit (core/storage/group_commit.py) takes everything queued while the
previous batch was committing and commits it as one transaction: one trip to the writer's
thread, one fsync (WAL, synchronous=FULL), however many messages it carries. A caller's await
returns only once the transaction holding its write is on disk, so each keeps its own
guarantee: a card is stored before it is sent, its delivered mark before a restart could send
it again, an update before Telegram is told it arrived.

Each write runs in a savepoint of its own: one that fails is undone alone, its caller gets a
StorageError, the rest of the batch commits. A batch that fails as a whole fails its callers
(it is not tried again). The connection is the writer's own (reads go through the shared
one); its thread is one thread, so a batch never queues behind a read.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import Any, Self, TypeVar, cast

from core.errors import StorageError
from core.runtime.tasks import Supervisor
from core.storage.connections import SharedConnection, open_connection
from core.storage.group_commit import GroupCommit

T = TypeVar("T")
Write = Callable[[sqlite3.Connection], Any]


class StateWriter:
    """state.db's batching writer: one connection, one thread, one writer task."""

    def __init__(self, path: Path, *, tasks: Supervisor | None = None) -> None:
        self.path = path
        self._db: SharedConnection | None = None
        self._commits: GroupCommit[Write, Any] = GroupCommit(
            self._commit, what="state.db", name="state-writer", tasks=tasks or Supervisor()
        )

    async def __aenter__(self) -> Self:
        await self.open()
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    @property
    def commits(self) -> int:
        """Transactions committed (each one fsync of the WAL)."""
        return self._commits.commits

    @property
    def writes(self) -> int:
        """Writes they carried."""
        return self._commits.writes

    async def open(self) -> None:
        """Connect (the schema state.db is opened with elsewhere) and start the writer."""
        try:
            self._db = await open_connection(self.path)
        except (sqlite3.Error, OSError) as exc:
            raise StorageError(f"{self.path}: cannot open the state database: {exc}") from None
        self._commits.start()

    async def close(self) -> None:
        """Commit what is queued, stop the writer and close the connection."""
        await self._commits.stop()
        if self._db is not None:
            db, self._db = self._db, None
            await db.close()

    async def write(self, write: Callable[[sqlite3.Connection], T]) -> T:
        """Run `write` in the next batch; returns its result once that batch is on disk.

        Raises StorageError when the write or its commit failed (nothing of it is stored).
        A cancelled caller's write still lands."""
        return cast(T, await self._commits.write(write))

    async def execute(self, sql: str, params: Sequence[object] = ()) -> int:
        """One statement in the next batch; returns how many rows it changed (as write)."""
        return await self.write(lambda conn: conn.execute(sql, params).rowcount)

    async def _commit(self, writes: list[Write]) -> list[Any]:
        if self._db is None:
            raise sqlite3.ProgrammingError("state.db is closed")
        return await self._db.run(partial(_run_batch, writes))


def _run_batch(writes: list[Write], conn: sqlite3.Connection) -> list[Any]:
    """In the writer's thread: every write in one transaction, each in a savepoint (a write
    that fails gives its exception as its result)."""
    results: list[Any] = []
    conn.execute("BEGIN IMMEDIATE")
    try:
        for write in writes:
            conn.execute("SAVEPOINT one")
            try:
                results.append(write(conn))
            except sqlite3.Error as exc:
                conn.execute("ROLLBACK TO one")
                results.append(exc)
            conn.execute("RELEASE one")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return results
