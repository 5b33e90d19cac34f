"""memory.db at start: made with WAL and a schema version, kept across restarts, and refused in
one line naming the file (never rewritten) when it is damaged or from a newer Lancelot."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from pathlib import Path

import pytest

from core.errors import StorageError
from core.memory import Memory, MemoryStore, Provenance
from core.memory.model import STRANGERS
from core.memory.schema import SCHEMA
from core.memory.store import Query
from core.receipts.ledger import SqliteLedger
from core.storage.versions import statements
from tests.core.memory.conftest import Home
from tests.fakes.calendar import CalendarClock


async def test_a_new_home_gets_wal_and_the_schema_version(tmp_path: Path) -> None:
    path = tmp_path / "home" / "memory.db"
    async with MemoryStore(path):
        pass
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert db.execute("PRAGMA user_version").fetchone() == (SCHEMA.version,)


async def test_what_was_remembered_and_said_survives_a_restart(
    home: Home, ledger: SqliteLedger, clock: CalendarClock
) -> None:
    done = await home.memory.remember("my server is called atlas", provenance=Provenance.OWNER)
    await home.memory.record_turn("c1", "owner", "hello there")
    await home.memory.set_task("c1", "tidy the notes", approval_id="a1")
    await home.memory.store.close()

    async with MemoryStore(home.path) as store:
        again = Memory(store, ledger, clock=clock)
        found = await again.recall("what is my server called?")
        assert [item.text for item in found] == ["my server is called atlas"]
        assert found[0].id == getattr(done, "item_id", None)
        assert [t.text for t in await again.conversation("c1")] == ["hello there"]
        task = await again.task_waiting_on("a1")
        assert task is not None
        assert task.request == "tidy the notes"


async def test_a_corrupt_file_is_refused_in_one_line_and_kept(
    tmp_path: Path, ledger: SqliteLedger
) -> None:
    path = tmp_path / "memory.db"
    async with MemoryStore(path) as store:
        for i in range(200):
            await Memory(store, ledger).record_turn("c1", "owner", f"keep me {i} " * 20)
    data = bytearray(path.read_bytes())
    data[100:4096] = b"\xff" * (4096 - 100)  # the header's tail and the first page: garbage
    path.write_bytes(bytes(data))
    before = path.read_bytes()

    with pytest.raises(StorageError) as caught:
        async with MemoryStore(path):
            pass
    message = str(caught.value)
    assert str(path) in message
    assert "\n" not in message
    assert path.read_bytes() == before  # nothing wiped, nothing rewritten


async def test_a_file_that_is_not_a_database_is_refused_and_kept(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    path.write_bytes(b"these are my notes, not a database" * 200)
    before = path.read_bytes()
    with pytest.raises(StorageError, match=r"memory\.db"):
        async with MemoryStore(path):
            pass
    assert path.read_bytes() == before


async def test_a_newer_schema_is_refused_and_kept(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    async with MemoryStore(path):
        pass
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {SCHEMA.version + 1}")
    db.close()
    with pytest.raises(StorageError) as caught:
        async with MemoryStore(path):
            pass
    assert "newer than this Lancelot" in str(caught.value)
    assert str(path) in str(caught.value)
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone() == (SCHEMA.version + 1,)


async def test_a_closed_store_says_so(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "memory.db")
    with pytest.raises(StorageError, match="not open"):
        await store.read("SELECT 1")


async def test_bookkeeping_rides_with_the_next_write_and_is_kept_at_close(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    used = "INSERT INTO memory_used (id, at) VALUES (?, ?)"
    async with MemoryStore(path) as store:
        store.later(used, ("m1", 1.0))
        # A read sees it (it is written first) ...
        assert await store.read("SELECT id FROM memory_used") == [("m1",)]
        store.later(used, ("m2", 2.0))
    # ... and what still waited at close is written then.
    db = sqlite3.connect(path)
    assert db.execute("SELECT id FROM memory_used ORDER BY at").fetchall() == [("m1",), ("m2",)]


async def test_statements_written_together_land_together_or_not_at_all(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    used = "INSERT INTO memory_used (id, at) VALUES (?, ?)"
    async with MemoryStore(path) as store:
        store.later(used, ("waited", 0.5))
        changed = await store.write_many([Query(used, ("a", 1.0)), Query(used, ("b", 2.0))])
        assert changed == [1, 1]  # the bookkeeping that rode along is not counted
        with pytest.raises(StorageError, match="memory database error"):
            await store.write_many(
                [Query(used, ("c", 3.0)), Query("INSERT INTO nowhere VALUES (1)")]
            )
        ids = await store.read("SELECT id FROM memory_used ORDER BY at")
    assert ids == [("waited",), ("a",), ("b",)]  # "c" went back with the failed statement


async def test_a_write_whose_caller_is_cancelled_lands_whole(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    used = "INSERT INTO memory_used (id, at) VALUES (?, ?)"
    async with MemoryStore(path) as store:
        many = [Query(used, (f"m{i}", float(i))) for i in range(2000)]
        writing = asyncio.ensure_future(store.write_many(many))
        await asyncio.sleep(0)  # on its way to the writing thread
        writing.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await writing
        await store.write("INSERT INTO memory_used (id, at) VALUES ('after', 9999)")
        (count,) = await store.read("SELECT count(*) FROM memory_used")
    assert count[0] in (1, 2001)  # all of it or none of it, never a part


async def test_a_version_1_memory_gets_labels_and_keeps_its_turns(
    tmp_path: Path, ledger: SqliteLedger
) -> None:
    """Version 2 adds where a turn's words came from; what version 1 held stays, unlabelled."""
    path = tmp_path / "memory.db"
    db = sqlite3.connect(path)
    for statement in statements(SCHEMA.steps[0]):  # type: ignore[arg-type]
        db.execute(statement)
    db.execute("INSERT INTO memory_chats (chat, conversation, started_at) VALUES ('c1', 1, 0)")
    db.execute(
        "INSERT INTO memory_turns (chat, conversation, role, text, at)"
        " VALUES ('c1', 1, 'owner', 'hello from version 1', 0)"
    )
    db.execute("PRAGMA user_version = 1")
    db.commit()
    db.close()
    async with MemoryStore(path) as store:
        memory = Memory(store, ledger)
        [turn] = await memory.conversation("c1")
        assert (turn.text, turn.label) == ("hello from version 1", "")
        await memory.end_turn("c1", [("agent", "a page said so")], label=STRANGERS)
        labels = [t.label for t in await memory.conversation("c1")]
    assert labels == ["", STRANGERS]
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone() == (2,)
