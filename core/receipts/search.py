"""The receipts' full-text index: a derived SQLite file, fed in bulk off the write path."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path

import aiosqlite

from core.errors import StorageError
from core.receipts.chain import Row
from core.receipts.schema import SEARCH, SEARCH_TEXT_LIMIT
from core.runtime.tasks import Supervisor
from core.storage.connections import open_db

log = logging.getLogger(__name__)


def documents(rows: Iterable[Row]) -> Iterator[tuple[int, str]]:
    """(seq, searchable text) of each receipt row (values in COLUMNS order)."""
    limit = SEARCH_TEXT_LIMIT
    for seq, _, _, kind, name, inputs, outputs, status, *_, error, _, _, _ in rows:
        yield seq, f"{kind} {name} {status} {error or ''} {inputs[:limit]} {outputs[:limit]}"


class SearchIndex:
    """FTS5 over receipts, keyed by seq. It can always be rebuilt from the ledger, so it is
    written with relaxed durability on its own connection (its own thread), in parallel with
    the ledger's writes."""

    def __init__(self, path: Path, *, tasks: Supervisor | None = None) -> None:
        self.path = path
        self._supervisor = tasks or Supervisor()
        self._db: aiosqlite.Connection | None = None
        self._pending: list[Row] = []
        self._wakeup = asyncio.Event()
        self._idle = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def open(self) -> None:
        """Open (or rebuild, if unreadable) the index and start the indexer task."""
        try:
            self._db = await self._connect()
        except (sqlite3.DatabaseError, StorageError) as exc:
            log.warning("search index %s unreadable (%s); rebuilding it", self.path, exc)
            await asyncio.to_thread(_remove_database, self.path)
            self._db = await self._connect()
        self._idle.set()
        self._task = self._supervisor.spawn(self._index_forever(), name="receipt-indexer")

    async def _connect(self) -> aiosqlite.Connection:
        return await open_db(self.path, SEARCH, "search index", synchronous="OFF")

    async def close(self) -> None:
        """Index what is queued, then stop."""
        if self._task is not None:
            with contextlib.suppress(sqlite3.Error):
                await self.drain()
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        if self._db is not None:
            await self._db.close()
            self._db = None

    def submit(self, rows: Iterable[Row]) -> None:
        """Queue committed receipt rows for indexing."""
        self._pending.extend(rows)
        if self._pending:
            self._idle.clear()
            self._wakeup.set()

    async def drain(self) -> None:
        """Wait until everything submitted is indexed."""
        await self._idle.wait()

    async def indexed_upto(self) -> int:
        """The highest seq in the index (receipts are indexed in order)."""
        async with self._conn().execute("SELECT max(rowid) FROM receipts_fts") as cur:
            row = await cur.fetchone()
        return int(row[0] or 0) if row else 0

    async def hits(self, expression: str, before_seq: int | None, limit: int) -> list[int]:
        """Seqs matching an FTS5 expression, newest first."""
        sql = "SELECT rowid FROM receipts_fts WHERE receipts_fts MATCH ?"
        params: list[object] = [expression]
        if before_seq is not None:
            sql += " AND rowid < ?"
            params.append(before_seq)
        sql += " ORDER BY rowid DESC LIMIT ?"
        params.append(limit)
        async with self._conn().execute(sql, params) as cur:
            return [int(r[0]) for r in await cur.fetchall()]

    async def count(self, expression: str, cap: int) -> int:
        """How many receipts match an FTS5 expression, counting no further than `cap` + 1."""
        sql = (
            "SELECT count(*) FROM (SELECT rowid FROM receipts_fts"
            " WHERE receipts_fts MATCH ? LIMIT ?)"
        )
        async with self._conn().execute(sql, (expression, cap + 1)) as cur:
            row = await cur.fetchone()
        return int(row[0]) if row else 0

    def _conn(self) -> aiosqlite.Connection:
        if self._db is None:
            raise sqlite3.OperationalError("the search index is not open")
        return self._db

    async def _index_forever(self) -> None:
        while True:
            await self._wakeup.wait()
            self._wakeup.clear()
            while self._pending:
                batch, self._pending = self._pending[:8192], self._pending[8192:]
                try:
                    await self._write(batch)
                except sqlite3.Error as exc:
                    # Search is derived data: log, drop this batch, keep the ledger going.
                    log.error("search index write failed for %d receipts: %s", len(batch), exc)
            self._idle.set()

    async def _write(self, batch: list[Row]) -> None:
        db = self._conn()
        await db.execute("BEGIN")
        try:
            # The documents are made in the database thread, as executemany pulls them.
            sql = "INSERT INTO receipts_fts(rowid, body) VALUES (?, ?)"
            await db.executemany(sql, documents(batch))
            await db.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                await db.execute("ROLLBACK")
            raise


def _remove_database(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
