"""A minutely health_sweep that finds nothing new leaves no receipt (its runs stay in the
history and the digest counts them); a sweep that sees a change, a manual run, and every
other job's run still leave their typed receipt."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from bot.app import Lancelot
from core.events import CardKind, Inbound
from core.scheduler import JobContext
from tests.fakes.calendar import CalendarClock
from tests.fakes.channel import MemoryChannel
from tests.fakes.owner import CHAT, OWNER
from tests.fakes.scheduled_app import receipts, scheduled_app, scheduler, write_jobs

JOBS = """
  health_sweep:
    run: builtin:health_sweep
    every_seconds: 60
  counter:
    run: builtin:count
    every_seconds: 60
"""


class Switch:
    """A health check the test turns bad and good."""

    def __init__(self) -> None:
        self.reason: str | None = None

    async def __call__(self) -> str | None:
        return self.reason


async def count(ctx: JobContext) -> str:
    return "counted"


def _history(home: Path, job: str) -> list[tuple[str, str]]:
    with sqlite3.connect(home / "scheduler.db") as db:
        rows = db.execute(
            "SELECT outcome, detail FROM scheduler_runs WHERE job = ? ORDER BY id", (job,)
        ).fetchall()
    return [(str(outcome), str(detail)) for outcome, detail in rows]


async def _sweep_details(app: Lancelot) -> list[str]:
    found = await receipts(app, "scheduled_job_run")
    return [r.outputs or "" for r in found if r.action_name == "health_sweep"]


async def test_only_sweeps_that_see_a_change_leave_a_receipt(tmp_path: Path) -> None:
    home, jobs = tmp_path / "home", write_jobs(tmp_path / "jobs.yaml", JOBS)
    clock = CalendarClock(time.time())  # the digest reads receipts by their real time
    phone, widget = MemoryChannel(), Switch()
    runners = {"builtin:count": count}
    async with scheduled_app(home, clock, jobs, channels=(phone,), runners=runners) as app:
        app.health.register("widget", widget)
        plan = [None] * 5 + ["widget: stuck"] * 4 + [None] * 3  # 12 minutes
        for reason in plan:
            widget.reason = reason
            clock.advance(60)
            assert await scheduler(app).run_pending() == 2
        sweeps = await _sweep_details(app)
        counted = [
            r for r in await receipts(app, "scheduled_job_run") if r.action_name == "counter"
        ]
        history = _history(home, "health_sweep")

        # A manual run is the owner asking: it always leaves a receipt.
        assert await scheduler(app).run_now("health_sweep") is not None
        await scheduler(app).idle()
        after_manual = await _sweep_details(app)
        clock.advance(1)  # the digest covers [since, now): the last minute's runs are in it
        await app.bus.publish(Inbound(phone.name, OWNER, CHAT, "/digest"))
        await app.drain()
        digest = next(c for _, c in phone.delivered if c.kind is CardKind.DIGEST)
        kinds = ("health_ok", "health_degraded", "health_recovered")
        transitions = {k: len(await receipts(app, k)) for k in kinds}

    assert len(history) == 12  # every run is in the history...
    assert all(outcome == "ok" for outcome, _ in history)
    assert len(sweeps) == 3  # ...but receipts only for the first, the fall and the recovery
    assert '"detail":"all checks pass"' in sweeps[0]
    assert '"detail":"degraded: widget: stuck"' in sweeps[1]
    assert '"detail":"all checks pass"' in sweeps[2]
    assert sum(d.endswith("(unchanged: no receipt)") for _, d in history) == 9
    assert len(counted) == 12  # other jobs keep one receipt per run
    assert len(after_manual) == 4
    assert transitions == {"health_ok": 1, "health_degraded": 1, "health_recovered": 1}
    assert dict(digest.fields)["Jobs"] == "counter ok 12, health_sweep ok 13"
