"""Schema versions: a fresh file gets every step, an older one only what it lacks, a failed
step changes nothing, and a file from a newer Lancelot is refused in one line naming it."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import aiosqlite
import pytest

from core.errors import StorageError
from core.state import open_state_db
from core.storage.versions import LAYOUT, Schema, migrate, migrate_file, statements

NOTES_V1 = "CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL)"
NOTES_V2 = "ALTER TABLE notes ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0"


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[aiosqlite.Connection]:
    conn = await aiosqlite.connect(tmp_path / "notes.db", isolation_level=None)
    yield conn
    await conn.close()


async def one(db: aiosqlite.Connection, sql: str) -> object:
    async with db.execute(sql) as cur:
        row = await cur.fetchone()
    return row[0] if row else None


async def test_a_fresh_file_runs_every_step_and_is_stamped(db: aiosqlite.Connection) -> None:
    seen: list[str] = []

    async def fill(conn: aiosqlite.Connection) -> None:
        seen.append("fill")
        await conn.execute("INSERT INTO notes (text, pinned) VALUES ('first', 1)")

    notes = Schema("notes", (NOTES_V1, NOTES_V2, fill))
    assert await migrate_file(db, notes) == 3
    assert await one(db, "PRAGMA user_version") == 3
    assert await one(db, "SELECT text FROM notes WHERE pinned = 1") == "first"
    assert await migrate_file(db, notes) == 3  # idempotent: nothing runs twice
    assert seen == ["fill"]


async def test_an_older_file_runs_only_the_steps_it_lacks(db: aiosqlite.Connection) -> None:
    await migrate_file(db, Schema("notes", (NOTES_V1,)))
    await db.execute("INSERT INTO notes (text) VALUES ('kept')")
    assert await migrate_file(db, Schema("notes", (NOTES_V1, NOTES_V2))) == 2
    assert await one(db, "SELECT text || pinned FROM notes") == "kept0"


async def test_a_home_from_before_versions_is_stamped_and_keeps_its_rows(
    db: aiosqlite.Connection,
) -> None:
    await db.execute(NOTES_V1)  # made by the code before versions: no user_version
    await db.execute("INSERT INTO notes (text) VALUES ('old')")
    assert await one(db, "PRAGMA user_version") == 0
    assert await migrate_file(db, Schema("notes", (NOTES_V1,))) == 1
    assert await one(db, "SELECT text FROM notes") == "old"


async def test_a_failed_step_leaves_the_file_as_it_was(
    db: aiosqlite.Connection, tmp_path: Path
) -> None:
    await migrate_file(db, Schema("notes", (NOTES_V1,)))
    broken = Schema(
        "notes", (NOTES_V1, "CREATE TABLE tags (name TEXT); ALTER TABLE nowhere ADD COLUMN x")
    )
    with pytest.raises(StorageError) as caught:
        await migrate_file(db, broken)
    message = str(caught.value)
    assert message.startswith(f"{tmp_path / 'notes.db'}: cannot upgrade the notes schema to")
    assert "version 2" in message
    assert "nowhere" in message
    assert await one(db, "PRAGMA user_version") == 1
    assert await one(db, "SELECT count(*) FROM sqlite_master WHERE name = 'tags'") == 0
    assert await migrate_file(db, Schema("notes", (NOTES_V1, NOTES_V2))) == 2  # usable after


async def test_a_file_from_a_newer_lancelot_is_refused_in_one_line(
    db: aiosqlite.Connection, tmp_path: Path
) -> None:
    await migrate_file(db, Schema("notes", (NOTES_V1, NOTES_V2)))
    with pytest.raises(StorageError) as caught:
        await migrate_file(db, Schema("notes", (NOTES_V1,)))
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(str(tmp_path / "notes.db"))
    assert "the notes schema is version 2, newer than this Lancelot knows (1)" in message
    assert await one(db, "PRAGMA user_version") == 2  # nothing touched


async def test_owners_of_one_file_keep_their_own_versions(tmp_path: Path) -> None:
    db = await open_state_db(tmp_path / "state.db")
    try:
        tags = Schema("tags", ("CREATE TABLE IF NOT EXISTS tags (name TEXT PRIMARY KEY)",))
        assert await migrate(db, Schema("notes", (NOTES_V1, NOTES_V2))) == 2
        assert await migrate(db, tags) == 1
        async with db.execute("SELECT owner, version FROM schema_versions ORDER BY owner") as c:
            assert list(await c.fetchall()) == [("notes", 2), ("tags", 1)]
        assert await one(db, "PRAGMA user_version") == LAYOUT.version
        await db.execute("UPDATE schema_versions SET version = 7 WHERE owner = 'tags'")
        with pytest.raises(StorageError, match=r"state\.db: the tags schema is version 7"):
            await migrate(db, tags)
        assert await migrate(db, Schema("notes", (NOTES_V1, NOTES_V2))) == 2  # unaffected
    finally:
        await db.close()


async def test_a_state_db_with_a_newer_layout_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    raw = sqlite3.connect(path)
    raw.execute(f"PRAGMA user_version = {LAYOUT.version + 1}")
    raw.close()
    with pytest.raises(StorageError) as caught:
        await open_state_db(path)
    assert str(caught.value).startswith(f"{path}: the state.db layout schema is version 2")


def test_scripts_split_into_whole_statements() -> None:
    script = """
    CREATE TABLE t (x TEXT DEFAULT 'a;b');
    CREATE TRIGGER t_keep BEFORE DELETE ON t BEGIN
        SELECT RAISE(ABORT, 'no; never');
    END;
    CREATE INDEX t_x ON t(x)
    """
    found = list(statements(script))
    assert [s.split()[1] for s in found] == ["TABLE", "TRIGGER", "INDEX"]
    assert "'no; never'" in found[1]
    assert found[1].endswith("END;")
    with pytest.raises(ValueError, match="incomplete"):
        list(statements("CREATE TRIGGER x BEFORE DELETE ON t BEGIN SELECT 1;"))


async def test_a_write_waits_for_another_tasks_read_while_a_second_connection_commits(
    tmp_path: Path,
) -> None:
    """state.db has two writing connections (the shared one, the delivery writer): a write
    on the shared one while another task's read there is still open must not fail."""
    path = tmp_path / "state.db"
    db = await open_state_db(path)
    other = sqlite3.connect(path, isolation_level=None)
    try:
        await db.execute("CREATE TABLE t (n INTEGER)")
        await db.execute("INSERT INTO t VALUES (1), (2), (3)")

        async def slow_read() -> list[int]:
            async with db.execute("SELECT n FROM t") as cur:
                first = await cur.fetchone()  # the read is open: its snapshot is held
                other.execute("INSERT INTO t VALUES (4)")  # the other connection commits
                await asyncio.sleep(0.05)
                return [first[0], *(r[0] for r in await cur.fetchall())] if first else []

        reading = asyncio.create_task(slow_read())
        await asyncio.sleep(0.01)
        await db.execute("UPDATE t SET n = n * 10 WHERE n = 1")  # was: database is locked
        assert await reading == [1, 2, 3]
        async with db.execute("SELECT n FROM t ORDER BY n") as cur:
            assert [r[0] for r in await cur.fetchall()] == [2, 3, 4, 10]
    finally:
        other.close()
        await db.close()
