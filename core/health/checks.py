"""Health checks the monitor runs: disk space, the scheduler ticking, cards stuck undelivered."""

from __future__ import annotations

import asyncio
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from core.delivery.store import OutboxStore
from core.health.snapshot import HealthCheck


class SchedulerView(Protocol):
    """What the scheduler check reads of the scheduler (core.scheduler.Scheduler is one)."""

    start_error: str | None
    started: asyncio.Event

    @property
    def running(self) -> bool:
        """Whether its loop runs."""
        ...

    async def overdue(self) -> list[str]:
        """Jobs whose due run went unclaimed."""
        ...


STUCK_AFTER = 300.0  # seconds a card may wait, failing, before its channel counts as down


def disk_check(home: Path, min_free_mb: int) -> HealthCheck:
    """Degraded when LANCELOT_HOME's file system has less than `min_free_mb` free."""

    async def check() -> str | None:
        usage = await asyncio.to_thread(shutil.disk_usage, home)
        free_mb = usage.free // (1024 * 1024)
        if free_mb < min_free_mb:
            return f"disk: only {free_mb} MB free (minimum {min_free_mb} MB)"
        return None

    return check


def scheduler_check(scheduler: SchedulerView) -> HealthCheck:
    """Degraded when the scheduler stopped, or a due run went unclaimed for a minute."""

    async def check() -> str | None:
        if scheduler.start_error is not None:
            return "scheduler: could not start"
        if not scheduler.started.is_set():
            return None  # not started yet (startup is reported on its own)
        if not scheduler.running:
            return "scheduler: not running"
        overdue = await scheduler.overdue()
        if overdue:
            return f"scheduler: not ticking ({', '.join(overdue)} overdue)"
        return None

    return check


def delivery_check(outbox: OutboxStore, wall: Callable[[], float] = time.time) -> HealthCheck:
    """Degraded when a channel's cards have been failing to go out for STUCK_AFTER seconds
    (the reason starts with the channel's name, so alerts go to the other channels)."""

    async def check() -> str | None:
        now = wall()
        stuck = [
            f"{b.channel}: {b.cards} card(s) undelivered for {int((now - b.oldest) // 60)} min"
            for b in await outbox.failing()
            if now - b.oldest > STUCK_AFTER
        ]
        return "; ".join(stuck) or None

    return check
