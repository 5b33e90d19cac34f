"""Every SQLite connection Lancelot makes, opened the one way: for writing (owner-only, WAL,
a durability level, a busy timeout, the owner's schema current) or for reading (read-only,
the same busy timeout, a page cache), in a thread of its own (async) or in the caller's."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from pathlib import Path
from typing import Any, Literal, TypeVar

import aiosqlite
from aiosqlite.context import contextmanager

from core.errors import StorageError
from core.storage.versions import Schema, migrate_file

T = TypeVar("T")

Synchronous = Literal["FULL", "NORMAL", "OFF"]

BUSY_TIMEOUT_MS = 5000  # how long a statement waits for another connection's lock
BUSY_RETRY_SECONDS = BUSY_TIMEOUT_MS / 1000  # as long as the busy timeout
# The read cache, in KiB (SQLite's default is 2 MB): the hot index pages stay in memory.
READ_CACHE_KIB = 16384


def keep_private(path: Path) -> None:
    """Owner-only access (0600) to a database file and the journal files SQLite keeps beside
    it (it makes those with the database file's mode). Called right after connecting."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(FileNotFoundError):
            os.chmod(f"{path}{suffix}", 0o600)


def connect(
    path: Path,
    *,
    synchronous: Synchronous = "FULL",
    pragmas: Sequence[str] = (),
    isolation_level: Literal["IMMEDIATE"] | None = None,
) -> sqlite3.Connection:
    """A writing connection to `path` (created if missing), usable from any one thread at a
    time: owner-only, WAL, `synchronous`, the busy timeout, then `pragmas`. It commits each
    statement unless told BEGIN, or with isolation_level="IMMEDIATE" opens a transaction at
    the first write that commit() ends. Raises sqlite3.Error or OSError."""
    conn = sqlite3.connect(path, isolation_level=isolation_level, check_same_thread=False)
    try:
        _set_up_writer(path, synchronous, pragmas, conn)
    except BaseException:
        conn.close()
        raise
    return conn


def _set_up_writer(
    path: Path, synchronous: Synchronous, pragmas: Sequence[str], conn: sqlite3.Connection
) -> None:
    keep_private(path)
    for pragma in (
        "PRAGMA journal_mode=WAL",
        f"PRAGMA synchronous={synchronous}",
        f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}",
        *pragmas,
    ):
        conn.execute(pragma).close()


def connect_reader(path: Path, *, cache_kib: int = 0) -> sqlite3.Connection:
    """A read-only connection to an existing `path`, usable from any one thread at a time
    (a missing file is an error, never created): the busy timeout and, with `cache_kib`, a
    page cache that large. Raises sqlite3.Error."""
    conn = _connect_read_only(path)
    try:
        _set_up_reader(cache_kib, conn)
    except BaseException:
        conn.close()
        raise
    return conn


def _connect_read_only(path: Path) -> sqlite3.Connection:
    uri = f"{path.resolve().as_uri()}?mode=ro"
    return sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)


def _set_up_reader(cache_kib: int, conn: sqlite3.Connection) -> None:
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    if cache_kib:
        conn.execute(f"PRAGMA cache_size=-{int(cache_kib)}")


def connect_scratch() -> sqlite3.Connection:
    """A private in-memory database, usable from any one thread at a time (to ask SQLite
    itself a question, such as where its tokenizer cuts a word)."""
    return sqlite3.connect(":memory:", check_same_thread=False)


class SharedConnection(aiosqlite.Connection):
    """A database connection, in a thread of its own, that several tasks share. When another
    connection also commits to the file (state.db's delivery writer), a write here can be
    refused at once with "database is locked" instead of waiting the busy timeout: another
    task's read on this connection, not yet fetched to its end, still holds an older
    snapshot. The write changed nothing then; it is tried again once that read has had its
    turn."""

    @contextmanager
    async def execute(self, sql: str, parameters: Iterable[Any] | None = None) -> aiosqlite.Cursor:
        """Run one statement (again while the file is locked, up to BUSY_RETRY_SECONDS)."""
        loop = asyncio.get_running_loop()
        give_up = loop.time() + BUSY_RETRY_SECONDS
        while True:
            try:
                cursor = await self._execute(  # type: ignore[no-untyped-call]
                    self._conn.execute, sql, list(parameters or [])
                )
            except sqlite3.OperationalError as exc:
                if "database is locked" not in str(exc) or loop.time() > give_up:
                    raise
                await asyncio.sleep(0.005)  # the pending read is fetched and closed meanwhile
            else:
                return aiosqlite.Cursor(self, cursor)

    async def run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run `work` on the connection in its thread: several statements in one trip there
        (each awaited statement is a trip of its own)."""
        return await self._execute(work, self._conn)  # type: ignore[no-any-return,no-untyped-call]


async def open_connection(
    path: Path,
    *,
    synchronous: Synchronous = "FULL",
    pragmas: Sequence[str] = (),
    isolation_level: Literal["IMMEDIATE"] | None = None,
) -> SharedConnection:
    """A writing connection (as `connect` makes) in a thread of its own; its schema is the
    caller's business (`open_db` brings it up to date). Raises sqlite3.Error or OSError."""
    raw = partial(sqlite3.connect, path, isolation_level=isolation_level, check_same_thread=False)
    return await _in_own_thread(raw, partial(_set_up_writer, path, synchronous, pragmas))


async def _in_own_thread(
    raw: Callable[[], sqlite3.Connection], set_up: Callable[[sqlite3.Connection], None]
) -> SharedConnection:
    """Connect in a thread of its own, then set the connection up there. The set-up runs
    apart from the connect: a connect that fails leaves aiosqlite's thread to stop on its own,
    after the caller may be gone; a set-up that fails is closed here and waited for."""
    db = SharedConnection(raw, 64)
    await db  # its thread starts and connects
    try:
        await db.run(set_up)
    except BaseException:
        await db.close()
        raise
    return db


async def open_db(
    path: Path,
    schema: Schema,
    what: str,
    *,
    check: bool = False,
    synchronous: Synchronous = "FULL",
    pragmas: Sequence[str] = (),
    isolation_level: Literal["IMMEDIATE"] | None = None,
) -> SharedConnection:
    """Open one of LANCELOT_HOME's databases for writing, in a thread of its own (`connect`),
    its schema current (`schema` kept in PRAGMA user_version); with `check`, a quick
    integrity check first, before anything is written. StorageError names the file and
    `what` it is (also for a file made by a newer Lancelot); nothing stays open after a
    failure."""
    db: SharedConnection | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if check:
            await asyncio.to_thread(quick_check, path)
        db = await open_connection(
            path, synchronous=synchronous, pragmas=pragmas, isolation_level=isolation_level
        )
        await migrate_file(db, schema)
    except (sqlite3.Error, OSError) as exc:
        if db is not None:
            await db.close()
        raise StorageError(f"{path}: cannot open the {what}: {exc}") from None
    except BaseException:
        if db is not None:
            await db.close()
        raise
    return db


def quick_check(path: Path) -> None:
    """Read every page of `path` (if it exists) and raise sqlite3.DatabaseError unless it
    is sound: a damaged file is refused before anything is written to it."""
    if not path.exists():
        return
    conn = connect_reader(path)
    try:
        row = conn.execute("PRAGMA quick_check").fetchone()
    finally:
        conn.close()
    if not row or row[0] != "ok":
        raise sqlite3.DatabaseError(f"integrity check failed: {row[0] if row else '?'}")


async def open_reader(path: Path, *, cache_kib: int = 0) -> SharedConnection:
    """A read-only connection to `path` (as `connect_reader` makes) in a thread of its own.
    Raises sqlite3.Error."""
    return await _in_own_thread(
        partial(_connect_read_only, path), partial(_set_up_reader, cache_kib)
    )
