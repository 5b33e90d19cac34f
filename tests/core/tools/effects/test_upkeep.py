"""Upkeep keeps LANCELOT_HOME bounded: at start-up it sweeps what a previous run left (the
engine's containers, dry-run directories nobody waits for, staging directories in the
workspace) and counts an interrupted change as applied; then, and whenever asked, it expires
dry runs past their time and lets go of undo backups past their age or over their budget.

Over a real journal and object store on disk; the engine's sweep is a function the test
hands in (no Docker here: tests/core/tools/effects/test_restart.py sweeps a real engine)."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from core.tools.base import ToolResult
from core.tools.effects.effectset import EffectSet
from core.tools.effects.journal import EffectJournal
from core.tools.effects.objects import ObjectStore
from core.tools.effects.records import Change, DryRun
from core.tools.effects.stage import STAGING_PREFIX
from core.tools.effects.upkeep import Upkeep

DAY = 86_400.0
NOW = 1_000_000.0


@dataclass(frozen=True)
class Bounds:
    backup_max_bytes: int = 10_000
    backup_max_age_seconds: float = 7 * DAY


@dataclass
class Home:
    journal: EffectJournal
    store: ObjectStore
    runs: Path
    workspace: Path
    swept: list[str]

    def upkeep(self, bounds: Bounds = Bounds(), *, engine_down: bool = False) -> Upkeep:
        def sweep() -> None:
            self.swept.append("swept")
            if engine_down:
                raise ConnectionRefusedError("no engine at /var/run/docker.sock")

        return Upkeep(self.journal, self.store, self.runs, self.workspace, bounds, sweep)

    def backup(self, content: bytes) -> tuple[str, int]:
        """A backup object in the store: its hash and size."""
        sha = hashlib.sha256(content).hexdigest()
        path = self.store.path(sha)
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(content)
        return sha, len(content)

    async def change(
        self, change_id: str, at: float, objects: dict[str, int], *, finished: bool = True
    ) -> None:
        change = Change(change_id, "rm x", at, at + DAY, EffectSet(), "applying")
        await self.journal.begin_change(change, objects)
        if finished:
            await self.journal.finish_change(change_id, EffectSet())

    async def dry_run(self, run_id: str, expires_at: float) -> None:
        result = ToolResult(0, "")
        run = DryRun(run_id, "echo x > f", expires_at - 600, expires_at, result, EffectSet())
        await self.journal.add_dry_run(run)
        (self.runs / run_id / "upper").mkdir(parents=True)


@pytest.fixture
async def home(tmp_path: Path) -> AsyncIterator[Home]:
    journal = EffectJournal(tmp_path / "effects.db")
    await journal.open()
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    runs = tmp_path / "dryruns"
    runs.mkdir()
    try:
        yield Home(journal, ObjectStore(tmp_path / "undo" / "objects"), runs, workspace, [])
    finally:
        await journal.close()


async def test_the_start_sweeps_the_engine_and_clears_what_nobody_waits_for(home: Home) -> None:
    await home.dry_run("waiting", NOW + 600)
    await home.dry_run("expired", NOW - 1)
    (home.runs / "half-made").mkdir()  # a slot a crash left half made
    (home.workspace / f"{STAGING_PREFIX}abc").mkdir()  # an apply a crash interrupted
    (home.workspace / "notes").mkdir()  # the owner's own
    await home.upkeep().startup(NOW)
    assert home.swept == ["swept"]
    assert sorted(p.name for p in home.runs.iterdir()) == ["waiting"]
    assert sorted(p.name for p in home.workspace.iterdir()) == ["notes"]
    assert await home.journal.pending_dry_runs() == {"waiting"}


async def test_the_start_also_lets_go_of_backups_past_their_age(home: Home) -> None:
    sha, size = home.backup(b"old content")
    await home.change("old", NOW - 8 * DAY, {sha: size})
    await home.upkeep(Bounds(backup_max_age_seconds=7 * DAY)).startup(NOW)
    assert not home.store.has(sha)


async def test_a_first_start_with_no_dry_run_directory_yet(home: Home) -> None:
    home.runs.rmdir()
    await home.upkeep().startup(NOW)
    assert not home.runs.exists()


async def test_a_change_a_crash_interrupted_counts_as_applied(home: Home) -> None:
    await home.change("cut", NOW - 10, {}, finished=False)
    await home.upkeep().startup(NOW)
    change = await home.journal.change("cut")
    assert change is not None
    assert change.state == "applied"  # its undo checks every path anyway


async def test_an_engine_that_is_down_does_not_stop_the_rest(
    home: Home, caplog: pytest.LogCaptureFixture
) -> None:
    await home.dry_run("expired", NOW - 1)
    await home.change("cut", NOW - 10, {}, finished=False)
    with caplog.at_level(logging.INFO, logger="core.tools.effects.upkeep"):
        await home.upkeep(engine_down=True).startup(NOW)
    assert "stale dry-run containers not checked: no engine at /var/run/docker.sock" in (
        caplog.messages
    )
    assert list(home.runs.iterdir()) == []
    change = await home.journal.change("cut")
    assert change is not None
    assert change.state == "applied"


async def test_a_dry_run_is_kept_until_its_time_and_not_a_moment_longer(home: Home) -> None:
    await home.dry_run("due", NOW)
    await home.dry_run("later", NOW + 1)
    await home.upkeep().run(NOW)
    assert sorted(p.name for p in home.runs.iterdir()) == ["later"]
    assert await home.journal.pending_dry_runs() == {"later"}


async def test_backups_past_their_age_go_and_younger_ones_stay(home: Home) -> None:
    old_sha, old_size = home.backup(b"old content")
    young_sha, young_size = home.backup(b"young content")
    bounds = Bounds(backup_max_age_seconds=7 * DAY)
    await home.change("old", NOW - 7 * DAY - 1, {old_sha: old_size})
    await home.change("young", NOW - 7 * DAY, {young_sha: young_size})
    await home.upkeep(bounds).run(NOW)
    assert not home.store.has(old_sha)
    assert home.store.has(young_sha)
    assert [sha for _, _, held in await home.journal.held_backups() for sha in held] == [young_sha]


async def test_over_budget_the_oldest_changes_let_go_until_it_fits(
    home: Home, caplog: pytest.LogCaptureFixture
) -> None:
    first, second, third = (home.backup(bytes([n]) * 2000) for n in (1, 2, 3))
    for n, (sha, size) in enumerate((first, second, third)):
        await home.change(f"c{n}", NOW - 100 + n, {sha: size})
    with caplog.at_level(logging.INFO, logger="core.tools.effects.upkeep"):
        await home.upkeep(Bounds(backup_max_bytes=4000)).run(NOW)  # 6000 held
    assert [home.store.has(sha) for sha, _ in (first, second, third)] == [False, True, True]
    assert caplog.messages == ["undo backups over budget: change c0 can no longer be undone"]
    change = await home.journal.change("c0")
    assert change is not None
    assert change.state == "expired"


async def test_a_budget_met_exactly_keeps_everything(home: Home) -> None:
    one, two = home.backup(b"a" * 1000), home.backup(b"b" * 3000)
    await home.change("c1", NOW - 10, dict([one]))
    await home.change("c2", NOW - 5, dict([two]))
    await home.upkeep(Bounds(backup_max_bytes=4000)).run(NOW)
    assert home.store.has(one[0])
    assert home.store.has(two[0])


async def test_a_backup_two_changes_share_counts_once_and_stays_while_one_holds_it(
    home: Home,
) -> None:
    shared = home.backup(b"s" * 3000)
    await home.change("older", NOW - 10, dict([shared]))
    await home.change("newer", NOW - 5, dict([shared]))
    await home.upkeep(Bounds(backup_max_bytes=3000)).run(NOW)  # 3000 on disk, not 6000
    assert len(await home.journal.held_backups()) == 2
    await home.upkeep(Bounds(backup_max_bytes=2999)).run(NOW)
    # Letting "older" go frees nothing while "newer" holds the same backup: both go.
    assert await home.journal.held_backups() == []
    assert not home.store.has(shared[0])


async def test_a_shared_backup_stays_while_a_change_still_holds_it(home: Home) -> None:
    shared, own = home.backup(b"s" * 3000), home.backup(b"o" * 2000)
    await home.change("older", NOW - 10, dict([shared, own]))
    await home.change("newer", NOW - 5, dict([shared]))
    await home.upkeep(Bounds(backup_max_bytes=3000)).run(NOW)  # 5000: "older" lets go
    assert home.store.has(shared[0])
    assert not home.store.has(own[0])
    assert [change_id for change_id, _, _ in await home.journal.held_backups()] == ["newer"]


async def test_settled_records_past_the_age_are_forgotten(home: Home) -> None:
    bounds = Bounds(backup_max_age_seconds=7 * DAY)
    await home.change("gone", NOW - 8 * DAY, {})
    await home.change("recent", NOW - DAY, {})
    await home.journal.settle_change("recent", "undone")
    await home.upkeep(bounds).run(NOW)
    assert await home.journal.change("gone") is None  # expired by age, then forgotten
    kept = await home.journal.change("recent")
    assert kept is not None
    assert kept.state == "undone"


def test_drop_objects_removes_exactly_the_named_backups(home: Home) -> None:
    one, two = home.backup(b"one"), home.backup(b"two")
    home.upkeep().drop_objects([one[0]])
    assert not home.store.has(one[0])
    assert home.store.has(two[0])
