"""Restart semantics: a run missed while down runs once on start within its grace (coalesced),
otherwise it is recorded as missed; no scheduled time ever runs twice."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from core.scheduler import JobContext
from tests.fakes.calendar import CalendarClock, utc
from tests.fakes.scheduled_app import receipts, scheduled_app, scheduler, write_jobs

JOBS = """
  hourly:
    run: builtin:count
    every_seconds: 3600
    grace_seconds: 600
  morning:
    run: builtin:count
    cron: "0 8 * * *"
    grace_seconds: 3600
  nightly:
    run: builtin:count
    cron: "0 3 * * *"
    grace_seconds: 600
  sweep:
    run: builtin:count
    every_seconds: 60
    grace_seconds: 3600
"""


def _runs(home: Path) -> list[tuple[str, float, str, str, int]]:
    with sqlite3.connect(home / "scheduler.db") as db:
        return db.execute(
            "SELECT job, scheduled_for, trigger, outcome, missed FROM scheduler_runs ORDER BY id"
        ).fetchall()


async def test_downtime_runs_once_within_grace_and_records_misses(tmp_path: Path) -> None:
    home, jobs = tmp_path / "home", write_jobs(tmp_path / "jobs.yaml", JOBS)
    clock = CalendarClock(utc(2026, 11, 23, 2, 0))
    ran: list[tuple[str, str, float]] = []

    async def count(ctx: JobContext) -> str:
        ran.append((ctx.job, ctx.trigger, ctx.scheduled_for))
        return "counted"

    runners = {"builtin:count": count}
    async with scheduled_app(home, clock, jobs, runners=runners) as first:
        clock.set(utc(2026, 11, 23, 2, 0, 30))
        await scheduler(first).run_pending()
        assert ran == []  # nothing was due yet
    # Down from 02:00:30 to 08:20: the 03:00 nightly and the 03:00-08:00 hourly runs are past
    # their grace; the 08:00 morning run is within it; the sweep's 379 runs coalesce into one.
    clock.set(utc(2026, 11, 23, 8, 20))
    async with scheduled_app(home, clock, jobs, runners=runners) as second:
        skipped = await receipts(second, "scheduled_job_skipped")
        done = await receipts(second, "scheduled_job_run")
    assert sorted(ran) == [
        ("morning", "catch_up", utc(2026, 11, 23, 8, 0).timestamp()),
        ("sweep", "catch_up", utc(2026, 11, 23, 8, 20).timestamp()),
    ]
    runs = {job: (trigger, outcome, missed) for job, _, trigger, outcome, missed in _runs(home)}
    assert runs["hourly"] == ("catch_up", "missed", 6)
    assert runs["nightly"] == ("catch_up", "missed", 1)
    assert runs["morning"] == ("catch_up", "ok", 0)
    assert runs["sweep"] == ("catch_up", "ok", 379)
    assert sorted(r.action_name for r in skipped) == ["hourly", "nightly"]
    assert all('"gate":"downtime"' in r.metadata for r in skipped)
    assert sorted(r.action_name for r in done) == ["morning", "sweep"]
    # Starting again at the same moment finds nothing to do: nothing runs twice.
    async with scheduled_app(home, clock, jobs, runners=runners) as third:
        assert await scheduler(third).run_pending() == 0
        clock.set(utc(2026, 11, 23, 8, 21))
        assert await scheduler(third).run_pending() == 1  # the sweep, on schedule again
    assert len(ran) == 3
    keys = [(job, when) for job, when, *_ in _runs(home)]
    assert len(keys) == len(set(keys))


async def test_a_run_cut_short_by_a_crash_is_not_run_again(tmp_path: Path) -> None:
    home, jobs = tmp_path / "home", write_jobs(tmp_path / "jobs.yaml", JOBS)
    clock = CalendarClock(utc(2026, 11, 23, 7, 59, 30))
    started: list[str] = []

    async def hang(ctx: JobContext) -> str:
        started.append(ctx.job)
        await asyncio.Event().wait()  # the process stops mid-run
        return "never"

    async with scheduled_app(home, clock, jobs, runners={"builtin:count": hang}) as first:
        clock.set(utc(2026, 11, 23, 8, 0, 0))
        scheduler(first).stop_grace = 0.05  # the stop finds them still running
        assert await scheduler(first).run_pending(wait=False) == 3
        await asyncio.sleep(0.05)
        assert sorted(started) == ["hourly", "morning", "sweep"]
    async with scheduled_app(home, clock, jobs, runners={"builtin:count": hang}) as second:
        assert await scheduler(second).run_pending() == 0
    outcomes = {job: outcome for job, _, _, outcome, _ in _runs(home)}
    assert outcomes == {"hourly": "interrupted", "morning": "interrupted", "sweep": "interrupted"}
    assert len(started) == 3


async def test_a_changed_schedule_applies_at_the_next_start(tmp_path: Path) -> None:
    home = tmp_path / "home"
    clock = CalendarClock(utc(2026, 11, 23, 5, 0))
    eight = write_jobs(
        tmp_path / "a.yaml", '  morning:\n    run: builtin:x\n    cron: "0 8 * * *"\n'
    )
    seven = write_jobs(
        tmp_path / "b.yaml", '  morning:\n    run: builtin:x\n    cron: "0 7 * * *"\n'
    )
    async with scheduled_app(home, clock, eight) as first:
        state = await scheduler(first).store.job("morning")
        assert state is not None
        assert state.next_run_at == utc(2026, 11, 23, 8, 0).timestamp()
    async with scheduled_app(home, clock, seven) as second:
        state = await scheduler(second).store.job("morning")
        assert state is not None
        assert state.next_run_at == utc(2026, 11, 23, 7, 0).timestamp()
