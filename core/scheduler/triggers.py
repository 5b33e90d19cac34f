"""When a job fires: APScheduler's triggers, read as epoch seconds."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.date import DateTrigger
from apscheduler.triggers.interval import IntervalTrigger

from core.scheduler.config import JobSpec
from core.scheduler.crontab import crontab_trigger

# Interval jobs fire on a fixed grid from this instant, so a restart keeps the same times.
ANCHOR = datetime(2000, 1, 1, tzinfo=UTC)
MAX_STEPS = 100_000
DAYS = (
    "sun",
    "mon",
    "tue",
    "wed",
    "thu",
    "fri",
    "sat",
    "sun",
)  # fire times walked when counting what a long downtime missed


def trigger_for(spec: JobSpec) -> BaseTrigger:
    """The APScheduler trigger a job's spec describes."""
    zone = spec.timezone or "UTC"
    if spec.every_seconds is not None:
        return IntervalTrigger(seconds=spec.every_seconds, start_date=ANCHOR, timezone=zone)
    if spec.at is not None:
        return DateTrigger(run_date=datetime.fromtimestamp(spec.at, UTC))
    assert spec.cron is not None
    return crontab_trigger(spec.cron, zone)


def next_after(trigger: BaseTrigger, after: float) -> float | None:
    """The first fire time strictly after `after` (epoch seconds), or None if none is left
    (a date trigger names its one time whatever `after` is: once past, it has none)."""
    start = datetime.fromtimestamp(after, UTC) + timedelta(microseconds=1)
    found = trigger.get_next_fire_time(None, start)
    return found.timestamp() if found is not None and found >= start else None


def missed_between(trigger: BaseTrigger, first: float, now: float) -> tuple[int, float]:
    """How many fire times fall in [first, now], and the latest of them (first included:
    it is the run that was due)."""
    count, latest = 1, first
    while count < MAX_STEPS:
        following = next_after(trigger, latest)
        if following is None or following > now:
            break
        count, latest = count + 1, following
    return count, latest
