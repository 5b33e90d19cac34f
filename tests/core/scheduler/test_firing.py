"""Cron and interval jobs fire at their times, once each, under a calendar clock."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from core.receipts.model import Receipt
from core.scheduler import READY, Gates, JobContext, JobSpec, Scheduler, SchedulerStore
from tests.fakes.calendar import CalendarClock, utc


async def _no_local_model() -> bool | None:
    return None


def _gates() -> Gates:
    return Gates(lambda: READY, _no_local_model, lambda: None)


class Recorder:
    """A job's code that remembers when each run was scheduled for."""

    def __init__(self) -> None:
        self.runs: list[tuple[str, datetime, str]] = []

    async def __call__(self, ctx: JobContext) -> str:
        self.runs.append((ctx.job, datetime.fromtimestamp(ctx.scheduled_for, UTC), ctx.trigger))
        return "done"


SPECS = (
    JobSpec(name="minutely", run="builtin:rec", every_seconds=60),
    JobSpec(name="digest", run="builtin:rec", cron="0 8 * * *", timezone="UTC"),
    # 09:30 in Paris on weekdays: 08:30 UTC in November.
    JobSpec(name="paris", run="builtin:rec", cron="30 9 * * 1-5", timezone="Europe/Paris"),
)


@pytest.fixture
async def rig(
    tmp_path: Path,
) -> AsyncIterator[tuple[Scheduler, CalendarClock, Recorder, list[Receipt]]]:
    clock = CalendarClock(utc(2026, 11, 23, 7, 58, 30))  # a Monday
    receipts: list[Receipt] = []
    recorder = Recorder()
    sched = Scheduler(
        SPECS, SchedulerStore(tmp_path / "scheduler.db"), receipts.append, _gates(), clock,
        timer=False,
    )  # fmt: skip
    sched.register("builtin:rec", recorder)
    async with sched:
        await sched.start()
        yield sched, clock, recorder, receipts


async def _walk(sched: Scheduler, clock: CalendarClock, seconds: float, step: float) -> None:
    for _ in range(int(seconds / step)):
        clock.advance(step)
        await sched.run_pending()


async def test_interval_and_cron_fire_on_time_once_each(
    rig: tuple[Scheduler, CalendarClock, Recorder, list[Receipt]],
) -> None:
    sched, clock, recorder, receipts = rig
    await _walk(sched, clock, 2 * 3600, 7)  # two hours in 7-second steps
    minutely = [when for job, when, _ in recorder.runs if job == "minutely"]
    assert minutely[0] == utc(2026, 11, 23, 7, 59)
    assert len(minutely) == 120
    assert len(set(minutely)) == 120
    assert all(when.second == 0 for when in minutely)
    assert [w for j, w, _ in recorder.runs if j == "digest"] == [utc(2026, 11, 23, 8, 0)]
    assert [w for j, w, _ in recorder.runs if j == "paris"] == [utc(2026, 11, 23, 8, 30)]
    assert sum(r.action_type == "scheduled_job_run" for r in receipts) == 122


async def test_weekend_skips_the_weekday_cron(
    rig: tuple[Scheduler, CalendarClock, Recorder, list[Receipt]],
) -> None:
    sched, clock, recorder, _ = rig
    for _ in range(7):  # a week, looking once a day at 07:58: each weekday run is caught
        clock.advance(86400)
        await sched.run_pending()
    paris = [w.date().isoweekday() for j, w, _ in recorder.runs if j == "paris"]
    assert paris == [1, 2, 3, 4, 5]  # Monday's run, then Tue-Fri (coalesced per day)


async def test_a_run_is_claimed_once_even_when_two_race(tmp_path: Path) -> None:
    store = SchedulerStore(tmp_path / "s.db")
    await store.open()
    try:
        await store.ensure("job", 100.0)
        first = await store.claim(
            "job", 100.0, 160.0, scheduled_for=100.0, now=101.0, trigger="schedule"
        )
        second = await store.claim(
            "job", 100.0, 160.0, scheduled_for=100.0, now=101.0, trigger="catch_up"
        )
        assert first is not None
        assert second is None
        assert (await store.job("job")).next_run_at == 160.0  # type: ignore[union-attr]
    finally:
        await store.close()


@pytest.mark.parametrize(
    ("weekdays", "expected"),
    [
        ("1-5", [1, 2, 3, 4, 5]),
        ("0", [7]),
        ("7", [7]),
        ("0-2", [1, 2, 7]),
        ("*/2", [2, 4, 6, 7]),
        ("1-5/2", [1, 3, 5]),
    ],
)
def test_crontab_weekdays_mean_what_cron_means(weekdays: str, expected: list[int]) -> None:
    from core.scheduler.crontab import crontab_trigger
    from core.scheduler.triggers import next_after

    trigger = crontab_trigger(f"0 12 * * {weekdays}", "UTC")
    seen, at = set(), utc(2026, 11, 23).timestamp()
    for _ in range(14):
        at = next_after(trigger, at) or 0
        seen.add(datetime.fromtimestamp(at, UTC).isoweekday())
    assert sorted(seen) == expected
