"""The alarm clock: one APScheduler AsyncIOScheduler on Lancelot's loop.

It holds one date job per scheduled job (the next run as stored in scheduler.db) and a
heartbeat; it decides nothing, it only wakes the scheduler up at the right moments.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

from apscheduler.jobstores.base import JobLookupError
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.date import DateTrigger
from apscheduler.triggers.interval import IntervalTrigger

HEARTBEAT_JOB = "__heartbeat__"
# A fire still claiming when the next one is due must not make APScheduler drop the next
# (a skipped date job never comes back); the claims in scheduler.db keep runs single.
MAX_OVERLAP = 100

Fire = Callable[[str, float], Awaitable[None]]


class Timer:
    """Wakes `fire(name, scheduled_time)` at each armed time and `heartbeat()` regularly."""

    def __init__(self, fire: Fire, heartbeat: Callable[[], Awaitable[None]], every: float) -> None:
        self._fire = fire
        self._heartbeat = heartbeat
        self._every = every
        self._aps: AsyncIOScheduler | None = None

    @property
    def running(self) -> bool:
        """Started and not shut down."""
        return self._aps is not None and self._aps.running

    def start(self) -> None:
        """Start on the running loop, with the heartbeat."""
        self._aps = AsyncIOScheduler(event_loop=asyncio.get_running_loop(), timezone=UTC)
        self._aps.start()
        self._aps.add_job(
            self._heartbeat,
            IntervalTrigger(seconds=self._every),
            id=HEARTBEAT_JOB,
            coalesce=True,
            misfire_grace_time=None,
        )

    def stop(self) -> None:
        """Shut down without waiting for running callbacks (the scheduler cancels its own)."""
        if self._aps is not None and self._aps.running:
            self._aps.shutdown(wait=False)

    def arm(self, name: str, at: float | None) -> None:
        """Wake `fire(name, at)` at `at` (epoch seconds), replacing what was armed for it."""
        if self._aps is None or at is None:
            return
        self._aps.add_job(
            self._fire,
            DateTrigger(run_date=datetime.fromtimestamp(at, UTC)),
            args=[name, at],
            id=name,
            replace_existing=True,
            misfire_grace_time=None,
            coalesce=True,
            max_instances=MAX_OVERLAP,
        )

    def disarm(self, name: str) -> None:
        """Forget the alarm for `name`, if any."""
        if self._aps is not None:
            with contextlib.suppress(JobLookupError):
                self._aps.remove_job(name)

    def armed(self, name: str) -> bool:
        """Whether an alarm is set for `name`."""
        return self._aps is not None and self._aps.get_job(name) is not None
