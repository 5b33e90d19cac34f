"""Schema versions: each table owner's ordered upgrade steps, applied when it opens.

Each table has one owner, which alone reads and writes it and declares it as a `Schema`: an
ordered list of upgrade steps, applied in its `setup()`. A file with one owner (ledger.db,
scheduler.db, memory.db) keeps its version in `PRAGMA user_version` (`migrate_file`). A shared
file (state.db) keeps each owner's version as a row of `schema_versions` (`migrate`), and the
file's own layout (that table) is its `PRAGMA user_version`.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass

import aiosqlite

from core.errors import StorageError

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
