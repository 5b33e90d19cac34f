"""Every file opened the one way: a writer is owner-only, WAL, as durable as asked and waits
for another's lock; a reader never writes and never creates a file; a damaged file is refused
before anything is written to it, in one line naming it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from core.errors import StorageError
from core.storage.connections import connect, connect_reader, open_db, open_reader
from core.storage.versions import Schema

NOTES = Schema("notes", ("CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, text TEXT)",))


def pragma(conn: sqlite3.Connection, name: str) -> object:
    return conn.execute(f"PRAGMA {name}").fetchone()[0]


def test_a_writer_is_owner_only_wal_as_durable_as_asked_and_waits_for_locks(
    tmp_path: Path,
) -> None:
    path = tmp_path / "notes.db"
    conn = connect(path, synchronous="NORMAL", pragmas=("PRAGMA wal_autocheckpoint=8000",))
    try:
        assert pragma(conn, "journal_mode") == "wal"
        assert pragma(conn, "synchronous") == 1  # NORMAL
        assert pragma(conn, "busy_timeout") == 5000
        assert pragma(conn, "wal_autocheckpoint") == 8000
        assert path.stat().st_mode & 0o777 == 0o600
    finally:
        conn.close()
    full = connect(path)
    try:
        assert pragma(full, "synchronous") == 2  # FULL, the default
    finally:
        full.close()


def test_a_reader_refuses_writes_and_never_creates_a_file(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    with pytest.raises(sqlite3.OperationalError):
        connect_reader(path)
    assert not path.exists()
    writer = connect(path)
    writer.execute("CREATE TABLE notes (text TEXT)")
    writer.execute("INSERT INTO notes VALUES ('kept')")
    reader = connect_reader(path, cache_kib=1024)
    try:
        assert reader.execute("SELECT text FROM notes").fetchall() == [("kept",)]
        assert (pragma(reader, "busy_timeout"), pragma(reader, "cache_size")) == (5000, -1024)
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            reader.execute("INSERT INTO notes VALUES ('no')")
    finally:
        reader.close()
        writer.close()


async def test_an_async_reader_reads_what_a_writer_committed_and_writes_nothing(
    tmp_path: Path,
) -> None:
    path = tmp_path / "notes.db"
    db = await open_db(path, NOTES, "notes database")
    reader = await open_reader(path)
    try:
        await db.execute("INSERT INTO notes (text) VALUES ('seen')")
        async with reader.execute("SELECT text FROM notes") as cur:
            assert await cur.fetchall() == [("seen",)]
        with pytest.raises(sqlite3.OperationalError):
            await reader.execute("DELETE FROM notes")
    finally:
        await reader.close()
        await db.close()


async def test_a_damaged_file_is_refused_naming_it_and_left_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    db = await open_db(path, NOTES, "notes database")
    await db.executemany("INSERT INTO notes (text) VALUES (?)", [("x" * 500,)] * 200)
    await db.close()
    damaged = bytearray(path.read_bytes())
    damaged[4096 * 2 : 4096 * 2 + 64] = b"\xff" * 64  # a page in the middle of the table
    path.write_bytes(bytes(damaged))

    with pytest.raises(StorageError, match=r"notes\.db: cannot open the notes database"):
        await open_db(path, NOTES, "notes database", check=True)
    assert path.read_bytes() == bytes(damaged)


async def test_a_file_from_a_newer_lancelot_is_refused_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    raw = sqlite3.connect(path)
    raw.execute("PRAGMA user_version = 7")
    raw.close()

    with pytest.raises(StorageError, match=r"notes\.db: the notes schema is version 7, newer"):
        await open_db(path, NOTES, "notes database")
