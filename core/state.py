"""The state database (state.db in LANCELOT_HOME), and the schema versions of every database.

Each table has one owner, which alone reads and writes it and declares it as a `Schema`: an
ordered list of upgrade steps, applied in its `setup()`. A file with one owner (ledger.db,
scheduler.db) keeps its version in `PRAGMA user_version` (`migrate_file`). state.db is shared:
each owner's version is a row of `schema_versions` (`migrate`), and the file's own layout
(that table) is its `PRAGMA user_version`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Protocol, TypeVar

import aiosqlite
from aiosqlite.context import contextmanager

from core.errors import StorageError

T = TypeVar("T")

# An upgrade step: an SQL script, or code given the connection (inside the step's transaction).
Step = str | Callable[[aiosqlite.Connection], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class Schema:
    """One owner's tables: step 1 creates version 1, step N turns version N-1 into N.

    A released step never changes (existing homes have run it); a change is a new step.
    Step 1 creates with IF NOT EXISTS, so a home made before versions existed is stamped."""

    owner: str
    steps: tuple[Step, ...]

    @property
    def version(self) -> int:
        """The version this code writes."""
        return len(self.steps)


LAYOUT = Schema(
    "state.db layout",
    (
        "CREATE TABLE IF NOT EXISTS schema_versions ("
        " owner TEXT PRIMARY KEY, version INTEGER NOT NULL)",
    ),
)


def keep_private(path: Path) -> None:
    """Owner-only access (0600) to a database file and the journal files SQLite keeps beside
    it (it makes those with the database file's mode). Call it right after connecting."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(FileNotFoundError):
            os.chmod(f"{path}{suffix}", 0o600)


BUSY_RETRY_SECONDS = 5.0  # as long as the busy timeout


def autocommit(path: Path) -> sqlite3.Connection:
    """A connection to `path` that commits each statement unless told BEGIN (a
    SharedConnection's, made in its own thread)."""
    return sqlite3.connect(path, isolation_level=None)


class SharedConnection(aiosqlite.Connection):
    """A database connection that several tasks share. When another connection also
    commits to the file (state.db's delivery writer), a write here can be refused at once
    with "database is locked" instead of waiting the busy timeout: another task's read on
    this connection, not yet fetched to its end, still holds an older snapshot. The write
    changed nothing then; it is tried again once that read has had its turn."""

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


class Commits(Protocol):
    """Where a small write to state.db goes: the delivery writer (core.delivery.writer, the
    writes of many callers in one commit) or, on its own, `Direct` on the shared connection."""

    async def execute(self, sql: str, params: Sequence[object] = ()) -> int:
        """Run one statement; durable on return; the rows it changed."""
        ...


@dataclass(frozen=True, slots=True)
class Direct:
    """Commits straight through a connection, one commit per statement."""

    db: aiosqlite.Connection

    async def execute(self, sql: str, params: Sequence[object] = ()) -> int:
        """Run one statement; the rows it changed."""
        cursor = await self.db.execute(sql, params)
        return cursor.rowcount


async def open_db(
    path: Path, schema: Schema, what: str, *, check: bool = False
) -> aiosqlite.Connection:
    """Open one of LANCELOT_HOME's databases the one way: owner-only, WAL, full durability,
    a busy timeout, its schema current (`schema` kept in PRAGMA user_version); with `check`,
    a quick integrity check first. StorageError names the file and `what` it is (also for a
    file made by a newer Lancelot); nothing stays open after a failure."""
    db: aiosqlite.Connection | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        db = await SharedConnection(partial(autocommit, path), 64)
        keep_private(path)
        await db.execute("PRAGMA journal_mode=WAL")
        await db.execute("PRAGMA synchronous=FULL")
        await db.execute("PRAGMA busy_timeout=5000")
        if check:
            async with db.execute("PRAGMA quick_check") as cur:
                row = await cur.fetchone()
            if not row or row[0] != "ok":
                raise sqlite3.DatabaseError(f"integrity check failed: {row[0] if row else '?'}")
        await migrate_file(db, schema)
    except (sqlite3.Error, OSError) as exc:
        if db is not None:
            await db.close()
        raise StorageError(f"{path}: cannot open the {what}: {exc}") from None
    except StorageError:
        if db is not None:
            await db.close()
        raise
    return db


async def open_state_db(path: Path) -> aiosqlite.Connection:
    """Open state.db, its layout current, after an integrity check."""
    return await open_db(path, LAYOUT, "state database", check=True)


async def migrate(db: aiosqlite.Connection, schema: Schema) -> int:
    """Bring one owner's tables in a shared file (state.db) up to `schema.version`, its
    version kept in schema_versions; returns the version. StorageError names the file when
    it is newer than this code or a step fails (the failed upgrade is rolled back)."""
    await migrate_file(db, LAYOUT)

    async def read() -> int:
        sql = "SELECT version FROM schema_versions WHERE owner = ?"
        async with db.execute(sql, (schema.owner,)) as cur:
            row = await cur.fetchone()
        return int(row[0]) if row else 0

    async def write(version: int) -> None:
        await _execute(
            db,
            "INSERT INTO schema_versions (owner, version) VALUES (?, ?)"
            " ON CONFLICT(owner) DO UPDATE SET version = excluded.version",
            (schema.owner, version),
        )

    return await _upgrade(db, schema, read, write)


async def migrate_file(db: aiosqlite.Connection, schema: Schema) -> int:
    """Bring a file with one owner (ledger.db, scheduler.db) up to `schema.version`, its
    version kept in PRAGMA user_version; otherwise as `migrate`."""

    async def read() -> int:
        async with db.execute("PRAGMA user_version") as cur:
            row = await cur.fetchone()
        return int(row[0]) if row else 0

    async def write(version: int) -> None:
        await _execute(db, f"PRAGMA user_version = {int(version)}")

    return await _upgrade(db, schema, read, write)


async def _upgrade(
    db: aiosqlite.Connection,
    schema: Schema,
    read: Callable[[], Awaitable[int]],
    write: Callable[[int], Awaitable[None]],
) -> int:
    file = await _file_name(db)
    try:
        if _check(file, schema, await read()) == schema.version:
            return schema.version  # the usual start: nothing to do, no write lock taken
        # Read again under the write lock: another process may have upgraded meanwhile.
        await _execute(db, "BEGIN IMMEDIATE")
        try:
            current = _check(file, schema, await read())
            for number in range(current + 1, schema.version + 1):
                await _run_step(db, schema.steps[number - 1], file, schema.owner, number)
            if current < schema.version:
                await write(schema.version)
            await _execute(db, "COMMIT")
        except BaseException:
            # SQLite may have ended the transaction itself on the error.
            with contextlib.suppress(sqlite3.Error):
                await _execute(db, "ROLLBACK")
            raise
    except sqlite3.Error as exc:
        raise StorageError(f"{file}: cannot upgrade the {schema.owner} schema: {exc}") from None
    return schema.version


def check_version(file: str, schema: Schema, found: int) -> None:
    """Raise StorageError (naming the file) when version `found` is newer than `schema`: for
    readers that open a file without upgrading it."""
    _check(file, schema, found)


def _check(file: str, schema: Schema, found: int) -> int:
    """`found`, unless the file is newer than this code."""
    if found > schema.version:
        raise StorageError(
            f"{file}: the {schema.owner} schema is version {found}, newer than this Lancelot"
            f" knows ({schema.version}); run the newer Lancelot or restore a backup"
        )
    return found


async def _run_step(
    db: aiosqlite.Connection, step: Step, file: str, owner: str, number: int
) -> None:
    try:
        if isinstance(step, str):
            # One statement at a time: executescript would commit the open transaction.
            for statement in statements(step):
                await _execute(db, statement)
        else:
            await step(db)
    except sqlite3.Error as exc:
        raise StorageError(
            f"{file}: cannot upgrade the {owner} schema to version {number}: {exc}"
        ) from None


def statements(script: str) -> Iterator[str]:
    """The complete statements of an SQL script (a trigger's body stays whole)."""
    pending = ""
    for piece in script.split(";"):
        pending += piece + ";"
        if sqlite3.complete_statement(pending):
            if pending.strip(" \t\r\n;"):
                yield pending.strip()
            pending = ""
    if pending.strip(" \t\r\n;"):
        raise ValueError(f"incomplete SQL statement: {pending.strip()[:80]}")


async def _execute(db: aiosqlite.Connection, sql: str, params: tuple[object, ...] = ()) -> None:
    """One statement, its cursor closed at once (an open one would hold back checkpoints)."""
    async with db.execute(sql, params):
        pass


async def _file_name(db: aiosqlite.Connection) -> str:
    """The main database's file, for messages (":memory:" for none)."""
    async with db.execute("PRAGMA database_list") as cur:
        for _seq, name, file in await cur.fetchall():
            if name == "main":
                return str(file) or ":memory:"
    return ":memory:"
