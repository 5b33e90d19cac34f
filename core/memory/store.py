"""memory.db: WAL, its schema version checked at open; a corrupt or newer file is refused in
one line naming it and is never rewritten. Writes go through one connection, one at a time;
reads through a second, read-only one in a thread of its own, each a consistent snapshot
(both opened by the storage engine, core/storage/connections.py)."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import Any, Self, TypeVar

import aiosqlite

from core.errors import StorageError
from core.memory.ranking import IDF, idf
from core.memory.schema import SCHEMA
from core.storage.connections import (
    READ_CACHE_KIB,
    SharedConnection,
    Synchronous,
    open_db,
    open_reader,
)

Row = tuple[Any, ...]
Params = Sequence[Any]
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Query:
    """One read: its SQL and parameters."""

    sql: str
    params: Params = ()


class MemoryStore:
    """The memory database. A read never sees half of a transaction (WAL snapshots), and
    several reads can share one trip to the reading thread (`read_many`)."""

    def __init__(self, path: Path, *, synchronous: str = "NORMAL") -> None:
        # NORMAL in WAL: a commit survives a crash of Lancelot; a power cut may lose the last
        # few commits, never corrupt the file. FULL also survives a power cut.
        if synchronous not in ("NORMAL", "FULL"):
            raise ValueError("synchronous must be NORMAL or FULL")
        self.path = path
        self._synchronous: Synchronous = "FULL" if synchronous == "FULL" else "NORMAL"
        self._db: SharedConnection | None = None
        self._reader: SharedConnection | None = None
        self._lock = asyncio.Lock()
        self._later: list[Query] = []  # bookkeeping writes that ride along with the next one
        self.reads = 0  # trips to the reading thread
        self.writes = 0  # write transactions (each one trip to the writing thread, or more)

    async def __aenter__(self) -> Self:
        await self.open()
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def open(self) -> None:
        """Open (creating or upgrading) memory.db; StorageError in one line naming the file."""
        try:
            # The integrity check reads every page before anything is written: a damaged
            # file stays as it was.
            self._db = await open_db(
                self.path, SCHEMA, "memory database", check=True, synchronous=self._synchronous
            )
            self._reader = await open_reader(self.path, cache_kib=READ_CACHE_KIB)
            await self._reader.run(_add_functions)
        except (sqlite3.Error, OSError) as exc:
            await self.close()
            raise StorageError(f"{self.path}: cannot open the memory database: {exc}") from None
        except BaseException:
            await self.close()
            raise

    async def close(self) -> None:
        """Write what waits (`later`), then close both connections (idempotent)."""
        if self._later and self._db is not None:
            with suppress(StorageError):  # bookkeeping only: never a reason not to close
                await self._flush_later()
        reader, self._reader = self._reader, None
        if reader is not None:
            await reader.close()
        if self._db is not None:
            db, self._db = self._db, None
            await db.close()

    @property
    def db(self) -> SharedConnection:
        """The writing connection; StorageError when closed."""
        if self._db is None:
            raise StorageError(f"{self.path}: the memory database is not open")
        return self._db

    async def read(self, sql: str, params: Params = ()) -> list[Row]:
        """Every row of one query."""
        (rows,) = await self.read_many([Query(sql, params)])
        return rows

    async def read_one(self, sql: str, params: Params = ()) -> Row | None:
        """The first row of one query, or None."""
        rows = await self.read(sql, params)
        return rows[0] if rows else None

    async def read_many(self, queries: Sequence[Query]) -> list[list[Row]]:
        """The rows of each query, all read from one snapshot in one trip to the thread
        (after what waits from `later`: a read sees every write asked for before it)."""
        if self._later:
            await self._flush_later()
        if self._reader is None:
            raise StorageError(f"{self.path}: the memory database is not open")
        self.reads += 1
        try:
            return await self._reader.run(partial(_read_all, queries))
        except sqlite3.Error as exc:
            raise self._failed(exc) from None

    def later(self, sql: str, params: Params = ()) -> None:
        """A bookkeeping write (when items were last used) that need not cost a commit of
        its own: it goes in with the next write, or at close. A crash before then loses it,
        which only a ranking notices."""
        self._later.append(Query(sql, params))

    async def _flush_later(self) -> None:
        await self.write_many([])  # what waits goes first, in one trip

    async def write(self, sql: str, params: Params = ()) -> int:
        """One statement as a transaction of its own (with what waits from `later`); how
        many rows it changed."""
        (changed,) = await self.write_many([Query(sql, params)])
        return changed

    async def write_many(self, queries: Sequence[Query]) -> list[int]:
        """Statements as one transaction (after what waits from `later`), in one trip to the
        writing thread; how many rows each changed. All or nothing, even if the caller is
        cancelled meanwhile."""
        async with self._lock:
            db = self.db
            waiting, self._later = self._later, []
            self.writes += 1
            try:
                changed = await db.run(partial(_write_all, [*waiting, *queries]))
            except sqlite3.Error as exc:
                raise self._failed(exc) from None
            return changed[len(waiting) :]

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Writer]:
        """One atomic write: everything done through the Writer commits together or not at all
        (an exception, cancellation included, rolls it all back)."""
        async with self._lock:
            db = self.db
            self.writes += 1
            try:
                await db.execute("BEGIN IMMEDIATE")
                try:
                    waiting, self._later = self._later, []
                    for query in waiting:
                        await db.execute(query.sql, query.params)
                    yield Writer(db)
                    await db.execute("COMMIT")
                except BaseException:
                    with suppress(sqlite3.Error):
                        await db.execute("ROLLBACK")
                    raise
            except sqlite3.Error as exc:
                raise self._failed(exc) from None

    def _failed(self, exc: sqlite3.Error) -> StorageError:
        return StorageError(f"{self.path}: memory database error: {exc}")


def _add_functions(reader: sqlite3.Connection) -> None:
    """The SQL functions the memory's queries call (ranking.py)."""
    reader.create_function(IDF, 3, idf, deterministic=True)


def _read_all(queries: Sequence[Query], reader: sqlite3.Connection) -> list[list[Row]]:
    """In the reading thread: the rows of each query, from one snapshot."""
    if len(queries) == 1:
        return [reader.execute(queries[0].sql, queries[0].params).fetchall()]
    reader.execute("BEGIN")
    try:
        return [reader.execute(q.sql, q.params).fetchall() for q in queries]
    finally:
        reader.execute("COMMIT")


def _write_all(queries: Sequence[Query], conn: sqlite3.Connection) -> list[int]:
    """In the writing thread: every statement in one transaction; the rows each changed."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        changed = [conn.execute(q.sql, q.params).rowcount for q in queries]
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return changed


class Writer:
    """Statements inside one open transaction."""

    def __init__(self, db: aiosqlite.Connection) -> None:
        self._db = db

    async def execute(self, sql: str, params: Params = ()) -> int:
        """Run one statement; how many rows it changed."""
        async with self._db.execute(sql, params) as cur:
            return cur.rowcount

    async def insert(self, sql: str, params: Params = ()) -> int:
        """Run one INSERT; the row id it made."""
        async with self._db.execute(sql, params) as cur:
            if cur.lastrowid is None:
                raise sqlite3.DatabaseError("the insert made no row")
            return cur.lastrowid

    async def executemany(self, sql: str, rows: Iterable[Params]) -> None:
        """Run one statement for each of `rows`."""
        await self._db.executemany(sql, rows)

    async def fetch(self, sql: str, params: Params = ()) -> list[Row]:
        """Rows of a query, seeing this transaction's own writes."""
        return [tuple(r) for r in await self._db.execute_fetchall(sql, params)]

    async def fetch_one(self, sql: str, params: Params = ()) -> Row | None:
        """The first row of a query, or None."""
        rows = await self.fetch(sql, params)
        return rows[0] if rows else None
