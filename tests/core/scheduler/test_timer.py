"""The real APScheduler timer on the running loop: jobs fire on time, once per scheduled time,
and a lost alarm is re-armed by the heartbeat."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from core.clock import SystemWallClock
from core.scheduler import READY, Gates, JobContext, JobSpec, Scheduler, SchedulerStore


async def _unknown() -> bool | None:
    return None


async def test_real_timer_fires_on_time_and_recovers_a_lost_alarm(tmp_path: Path) -> None:
    starts: list[tuple[float, float]] = []

    async def probe(ctx: JobContext) -> str:
        starts.append((ctx.scheduled_for, time.time()))
        return "ok"

    sched = Scheduler(
        (JobSpec(name="tick", run="builtin:probe", every_seconds=0.2),),
        SchedulerStore(tmp_path / "scheduler.db"),
        lambda receipt: None,
        Gates(lambda: READY, _unknown, lambda: None),
        SystemWallClock(),
        heartbeat=0.25,
    )
    sched.register("builtin:probe", probe)
    async with sched:
        await sched.start()
        assert sched.running
        await asyncio.sleep(1.1)
        sched._timer.disarm("tick")  # type: ignore[union-attr]  # as if the alarm were lost
        lost_at = len(starts)
        await asyncio.sleep(1.1)
    assert lost_at >= 4
    assert len(starts) >= lost_at + 2  # the heartbeat put it back
    scheduled = [at for at, _ in starts]
    assert len(scheduled) == len(set(scheduled))
    on_time = [started - at for at, started in starts[:lost_at]]
    assert max(on_time) < 0.1
    assert max(sched.lateness) < 1.0
