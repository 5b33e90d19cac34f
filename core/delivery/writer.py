"""Group commit for state.db's delivery writes (the outbox and the inbox).

Callers queue a write (a function of a sqlite3 connection) and await it; one writer task
takes everything queued while the previous batch was committing and commits it as one
transaction: one trip to the writer's thread, one fsync (WAL, synchronous=FULL), however many
messages it carries. A caller's await returns only once the transaction holding its write is
on disk, so each keeps its own guarantee: a card is stored before it is sent, its delivered
mark before a restart could send it again, an update before Telegram is told it arrived.

Each write runs in a savepoint of its own: one that fails is undone alone, its caller gets a
StorageError, the rest of the batch commits. The connection is the writer's own (reads go
through the shared one); its thread is one thread, so a batch never queues behind a read.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import TracebackType
from typing import Any, Self, TypeVar

from core.errors import StorageError
from core.runtime.tasks import Supervisor
from core.storage.connections import connect

log = logging.getLogger(__name__)

T = TypeVar("T")
Write = Callable[[sqlite3.Connection], Any]
_Queued = tuple[Write, "asyncio.Future[Any]"]


class StateWriter:
    """state.db's batching writer: one connection, one thread, one writer task."""

    def __init__(self, path: Path, *, tasks: Supervisor | None = None) -> None:
        self.path = path
        self._supervisor = tasks or Supervisor()
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="state-writer")
        self._conn: sqlite3.Connection | None = None
        self._queue: list[_Queued] = []
        self._wakeup = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._closing = False
        self.commits = 0  # transactions committed (each one fsync of the WAL)
        self.writes = 0  # writes they carried

    async def __aenter__(self) -> Self:
        await self.open()
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def open(self) -> None:
        """Connect (the durability state.db is opened with elsewhere) and start the writer."""
        try:
            self._conn = await self._in_thread(connect, self.path)
        except (sqlite3.Error, OSError) as exc:
            raise StorageError(f"{self.path}: cannot open the state database: {exc}") from None
        self._task = self._supervisor.spawn(self._write_forever(), name="state-writer")

    async def close(self) -> None:
        """Commit what is queued, stop the writer and close the connection."""
        self._closing = True
        self._wakeup.set()
        if self._task is not None:
            await asyncio.wait([self._task])  # it ends once the queue is empty
            self._task = None
        if self._conn is not None:
            conn, self._conn = self._conn, None
            await self._in_thread(conn.close)
        self._thread.shutdown(wait=False)

    async def write(self, write: Callable[[sqlite3.Connection], T]) -> T:
        """Run `write` in the next batch; returns its result once that batch is on disk.

        Raises StorageError when the write or its commit failed (nothing of it is stored)."""
        if self._closing or self._task is None or self._task.done():
            raise StorageError("state.db is closed")
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._queue.append((write, future))
        self._wakeup.set()
        return await asyncio.shield(future)  # a cancelled caller's write still lands

    async def execute(self, sql: str, params: Sequence[object] = ()) -> int:
        """One statement in the next batch; returns how many rows it changed (as write)."""
        return await self.write(lambda conn: conn.execute(sql, params).rowcount)

    async def _write_forever(self) -> None:
        try:
            while self._queue or not self._closing:
                await self._wakeup.wait()
                self._wakeup.clear()
                batch, self._queue = self._queue, []
                if batch:
                    await self._commit(batch)
        finally:
            self._fail(self._queue, StorageError("state.db writer stopped"))
            self._queue = []

    async def _commit(self, batch: list[_Queued]) -> None:
        try:
            results = await self._in_thread(self._run_batch, [w for w, _ in batch])
        except (sqlite3.Error, ValueError) as exc:  # ValueError: the connection was closed
            log.error("state.db: a batch of %d write(s) failed: %s", len(batch), exc)
            self._fail(batch, StorageError(f"state.db: not stored: {exc}"))
            return
        self.commits += 1
        self.writes += len(batch)
        for (write, future), result in zip(batch, results, strict=True):
            if isinstance(result, sqlite3.Error):
                self._fail([(write, future)], StorageError(f"state.db: not stored: {result}"))
            elif not future.done():
                future.set_result(result)

    def _run_batch(self, writes: list[Write]) -> list[Any]:
        """In the writer's thread: every write in one transaction, each in a savepoint."""
        conn = self._conn
        if conn is None:
            raise ValueError("closed")
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

    async def _in_thread(self, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._thread, fn, *args)

    @staticmethod
    def _fail(batch: list[_Queued], error: StorageError) -> None:
        for _, future in batch:
            if not future.done():
                future.set_exception(error)
                future.exception()  # retrieved: the caller may have gone
