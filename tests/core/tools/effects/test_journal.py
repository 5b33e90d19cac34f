"""The effect journal on a real effects.db on disk: dry runs kept and settled, changes begun,
finished, listed and let go, each write whole or not at all.

A statement that fails inside a write is a real SQLite refusal: a trigger the test adds to
the database aborts it, as a constraint would."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from core.errors import StorageError
from core.tools.base import ToolResult
from core.tools.effects import Effect, EffectSet, FileState
from core.tools.effects.journal import EffectJournal
from core.tools.effects.model import ABSENT
from core.tools.effects.records import Change, DryRun

NOW = 1_000_000.0
BEFORE = EffectSet((Effect("notes.md", FileState("file", 0o644, 5, "a" * 64), ABSENT),))
WRITTEN = EffectSet((Effect("notes.md", FileState("file", 0o644, 5, "a" * 64, ino=9), ABSENT),))


@pytest.fixture
async def journal(tmp_path: Path) -> AsyncIterator[EffectJournal]:
    opened = EffectJournal(tmp_path / "effects.db")
    await opened.open()
    try:
        yield opened
    finally:
        await opened.close()


def dry_run(run_id: str, *, created: float = NOW, expires: float = NOW + 600) -> DryRun:
    result = ToolResult(3, "rm: done\n", truncated=True)
    return DryRun(run_id, "rm notes.md", created, expires, result, BEFORE)


def change(change_id: str, at: float = NOW, *, undo_until: float = NOW + 600) -> Change:
    return Change(change_id, "rm notes.md", at, undo_until, BEFORE, "applying")


async def refuse(journal: EffectJournal, when: str, table: str) -> None:
    """From now on SQLite aborts every `when` (INSERT, UPDATE, DELETE) on `table`."""
    await journal.db.execute(
        f"CREATE TRIGGER refuse_{table} BEFORE {when} ON {table}"
        " BEGIN SELECT RAISE(ABORT, 'refused'); END"
    )


async def begun(
    journal: EffectJournal, change_id: str, objects: dict[str, int], at: float = NOW
) -> None:
    """A change begun and finished, as an apply leaves it."""
    await journal.begin_change(change(change_id, at), objects)
    await journal.finish_change(change_id, WRITTEN)


async def test_the_journal_is_usable_only_while_open(tmp_path: Path) -> None:
    journal = EffectJournal(tmp_path / "effects.db")
    await journal.close()  # closing what never opened is fine
    with pytest.raises(StorageError, match=r"^the effects database is not open$"):
        _ = journal.db
    await journal.open()
    await journal.add_dry_run(dry_run("r1"))
    assert (tmp_path / "effects.db-wal").exists()
    await journal.close()
    assert not (tmp_path / "effects.db-wal").exists()  # the last connection really closed
    await journal.close()
    with pytest.raises(StorageError, match="the effects database is not open"):
        await journal.dry_run("r1")
    await journal.open()
    assert await journal.pending_dry_runs() == {"r1"}
    await journal.close()


async def test_a_file_that_cannot_be_the_journal_is_named_and_said_why(tmp_path: Path) -> None:
    path = tmp_path / "effects.db"
    path.write_bytes(b"not a database, " * 100)
    with pytest.raises(StorageError) as caught:
        await EffectJournal(path).open()
    assert str(caught.value) == (
        f"{path}: cannot open the effects database: file is not a database"
    )
    path.unlink()
    with sqlite3.connect(path) as made_by_a_newer_lancelot:
        made_by_a_newer_lancelot.execute("PRAGMA user_version = 99")
    made_by_a_newer_lancelot.close()
    with pytest.raises(StorageError, match=r": the effects schema is version 99, newer than"):
        await EffectJournal(path).open()


async def test_a_dry_run_reads_back_as_it_was_kept(journal: EffectJournal) -> None:
    await journal.add_dry_run(dry_run("r1"))
    assert await journal.dry_run("r1") == dry_run("r1")
    assert await journal.dry_run("r2") is None
    kept = DryRun("r3", "true", NOW, NOW + 1, ToolResult(0, ""), EffectSet())
    await journal.add_dry_run(kept)
    assert await journal.dry_run("r3") == kept


async def test_a_dry_run_settles_once(journal: EffectJournal) -> None:
    await journal.add_dry_run(dry_run("r1"))
    await journal.add_dry_run(dry_run("r2"))
    assert await journal.settle_dry_run("r1", "discarded") is True
    assert await journal.settle_dry_run("r1", "applied") is False
    assert await journal.settle_dry_run("nobody", "applied") is False
    settled = await journal.dry_run("r1")
    assert settled is not None
    assert settled.state == "discarded"
    assert await journal.pending_dry_runs() == {"r2"}


async def test_dry_runs_expire_at_their_time(journal: EffectJournal) -> None:
    await journal.add_dry_run(dry_run("due", expires=NOW))
    await journal.add_dry_run(dry_run("past", expires=NOW - 5))
    await journal.add_dry_run(dry_run("later", expires=NOW + 1))
    await journal.add_dry_run(dry_run("settled", expires=NOW - 5))
    await journal.settle_dry_run("settled", "discarded")
    assert sorted(await journal.expire_dry_runs(NOW)) == ["due", "past"]
    states = {run_id: await journal.dry_run(run_id) for run_id in ("due", "later", "settled")}
    assert {run_id: run.state for run_id, run in states.items() if run} == {
        "due": "expired",
        "later": "pending",
        "settled": "discarded",
    }
    assert await journal.expire_dry_runs(NOW) == []


async def test_a_change_is_begun_then_finished(journal: EffectJournal) -> None:
    await journal.add_dry_run(dry_run("c1"))
    await journal.begin_change(change("c1"), {"b" * 64: 10, "c" * 64: 20})
    assert await journal.change("c1") == change("c1")
    assert await journal.interrupted_changes() == ["c1"]
    assert await journal.held_backups() == [("c1", NOW, {"b" * 64: 10, "c" * 64: 20})]
    await journal.finish_change("c1", WRITTEN)
    finished = await journal.change("c1")
    assert finished == Change("c1", "rm notes.md", NOW, NOW + 600, WRITTEN, "applied")
    assert finished.effects.effects[0].after == WRITTEN.effects[0].after  # the ino kept too
    assert await journal.interrupted_changes() == []
    run = await journal.dry_run("c1")
    assert run is not None
    assert run.state == "applied"
    assert await journal.change("nobody") is None


async def test_a_change_whose_backups_cannot_be_kept_is_not_begun(
    journal: EffectJournal,
) -> None:
    await refuse(journal, "INSERT", "change_objects")
    with pytest.raises(sqlite3.IntegrityError, match="refused"):
        await journal.begin_change(change("c1"), {"b" * 64: 10})
    assert await journal.change("c1") is None
    await journal.begin_change(change("c2"), {})  # the journal goes on
    assert await journal.interrupted_changes() == ["c2"]


async def test_a_finish_that_fails_leaves_the_change_applying(journal: EffectJournal) -> None:
    await journal.add_dry_run(dry_run("c1"))
    await journal.begin_change(change("c1"), {})
    await refuse(journal, "UPDATE", "dry_runs")
    with pytest.raises(sqlite3.IntegrityError, match="refused"):
        await journal.finish_change("c1", WRITTEN)
    assert await journal.change("c1") == change("c1")
    await journal.begin_change(change("c2"), {})
    assert sorted(await journal.interrupted_changes()) == ["c1", "c2"]


async def test_recent_changes_are_those_still_undoable_newest_first(
    journal: EffectJournal,
) -> None:
    await begun(journal, "old", {})
    await journal.begin_change(change("cut", NOW + 1), {})
    await begun(journal, "new", {}, NOW + 2)
    await journal.begin_change(change("over", NOW + 3, undo_until=NOW + 10), {})
    await begun(journal, "undone", {})
    await journal.settle_change("undone", "undone")
    recent = await journal.recent_changes(NOW + 10, 5)
    assert [c.id for c in recent] == ["new", "cut", "old"]
    assert [c.id for c in await journal.recent_changes(NOW + 10, 2)] == ["new", "cut"]
    assert recent[0].effects == WRITTEN
    assert await journal.recent_changes(NOW + 600, 5) == []


async def test_letting_go_of_a_change_frees_only_what_no_other_holds(
    journal: EffectJournal,
) -> None:
    shared, own = "s" * 64, "o" * 64
    await begun(journal, "older", {shared: 3, own: 2})
    await begun(journal, "newer", {shared: 3})
    assert await journal.settle_change("older", "expired") == [own]
    older = await journal.change("older")
    assert older is not None
    assert older.state == "expired"
    assert await journal.held_backups() == [("newer", NOW, {shared: 3})]
    assert await journal.settle_change("newer", "undone") == [shared]
    assert await journal.held_backups() == []


async def test_a_release_that_fails_keeps_the_change_and_its_backups(
    journal: EffectJournal,
) -> None:
    await begun(journal, "c1", {"b" * 64: 10})
    await refuse(journal, "DELETE", "change_objects")
    with pytest.raises(sqlite3.IntegrityError, match="refused"):
        await journal.settle_change("c1", "undone")
    kept = await journal.change("c1")
    assert kept is not None
    assert kept.state == "applied"
    await journal.begin_change(change("c2"), {})  # the journal goes on
    assert await journal.interrupted_changes() == ["c2"]


async def test_an_interrupted_change_can_be_counted_applied(journal: EffectJournal) -> None:
    await journal.begin_change(change("c1"), {})
    await journal.begin_change(change("c2"), {})
    await journal.mark_applied("c1")
    assert await journal.interrupted_changes() == ["c2"]
    marked = await journal.change("c1")
    assert marked is not None
    assert marked.state == "applied"


async def test_held_backups_are_listed_oldest_first_then_by_id(journal: EffectJournal) -> None:
    await journal.begin_change(change("b", NOW), {"1" * 64: 1})
    await journal.begin_change(change("a", NOW), {"2" * 64: 2, "3" * 64: 3})
    await journal.begin_change(change("z", NOW - 1), {"4" * 64: 4})
    await journal.begin_change(change("none", NOW - 2), {})
    assert await journal.held_backups() == [
        ("z", NOW - 1, {"4" * 64: 4}),
        ("a", NOW, {"2" * 64: 2, "3" * 64: 3}),
        ("b", NOW, {"1" * 64: 1}),
    ]


async def test_old_changes_are_the_unsettled_ones_before_a_time(journal: EffectJournal) -> None:
    await journal.begin_change(change("second", NOW - 5), {})
    await begun(journal, "first", {}, NOW - 9)
    await journal.begin_change(change("at", NOW), {})
    await journal.begin_change(change("gone", NOW - 20), {})
    await journal.settle_change("gone", "undone")
    assert await journal.old_changes(NOW) == ["first", "second"]


async def test_settled_rows_before_a_time_are_forgotten(journal: EffectJournal) -> None:
    for run_id, created in (("old", NOW - 9), ("at", NOW), ("waiting", NOW - 9)):
        await journal.add_dry_run(dry_run(run_id, created=created))
    await journal.settle_dry_run("old", "discarded")
    await journal.settle_dry_run("at", "discarded")
    for change_id, at in (("undone", NOW - 9), ("expired", NOW - 9), ("live", NOW - 9)):
        await journal.begin_change(change(change_id, at), {})
    await journal.begin_change(change("recent", NOW), {})
    await journal.settle_change("undone", "undone")
    await journal.settle_change("expired", "expired")
    await journal.settle_change("recent", "undone")
    await journal.forget_old(NOW)
    assert await journal.dry_run("old") is None
    assert [r for r in ("at", "waiting") if await journal.dry_run(r) is not None] == [
        "at",
        "waiting",
    ]
    kept = ("undone", "expired", "live", "recent")
    assert [c for c in kept if await journal.change(c) is not None] == ["live", "recent"]
