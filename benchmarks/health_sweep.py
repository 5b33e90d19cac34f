"""Receipts a day of health_sweep writes: a healthy day, and a day with one degraded spell.

The real composition root under a calendar clock: the shipped health_sweep job (every 60 s)
runs 1,440 times for a simulated day; the script counts its scheduled_job_run receipts, the
health_* transition receipts, and the runs kept in scheduler.db's history.

Run: .venv/bin/python benchmarks/health_sweep.py [--minutes 1440]
Before quiet sweeps: 1,440 scheduled_job_run receipts a day, changed or not.
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:] = [str(HERE.parent), *(p for p in sys.path if Path(p or ".").resolve() != HERE)]

from tests.fakes.calendar import CalendarClock  # noqa: E402
from tests.fakes.scheduled_app import scheduled_app, scheduler, write_jobs  # noqa: E402

JOBS = """
  health_sweep:
    run: builtin:health_sweep
    every_seconds: 60
    grace_seconds: 30
"""


class Switch:
    """A health check that fails during a chosen span of minutes."""

    def __init__(self) -> None:
        self.reason: str | None = None

    async def __call__(self) -> str | None:
        return self.reason


async def day(root: Path, minutes: int, spell: range) -> dict[str, int]:
    """Run the sweep once a minute for `minutes`; the check fails during `spell`."""
    home, jobs = root / "home", write_jobs(root / "jobs.yaml", JOBS)
    clock, widget = CalendarClock(time.time()), Switch()
    async with scheduled_app(home, clock, jobs) as app:
        app.health.register("widget", widget)
        for minute in range(minutes):
            widget.reason = "widget: stuck" if minute in spell else None
            clock.advance(60)
            await scheduler(app).run_pending()
    with sqlite3.connect(home / "scheduler.db") as db:
        [(history,)] = db.execute("SELECT COUNT(*) FROM scheduler_runs").fetchall()
    with sqlite3.connect(home / "ledger.db") as db:
        counts = dict(db.execute("SELECT action_type, COUNT(*) FROM receipts GROUP BY 1"))
    transitions = sum(v for k, v in counts.items() if k.startswith("health_"))
    return {
        "runs in history": history,
        "sweep receipts": counts.get("scheduled_job_run", 0),
        "health_*": transitions,
        "all receipts": sum(counts.values()),
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=int, default=1440)
    args = parser.parse_args()
    for label, spell in (("healthy day", range(0)), ("one 30-minute spell", range(600, 630))):
        with tempfile.TemporaryDirectory() as tmp:
            started = time.perf_counter()
            found = await day(Path(tmp), args.minutes, spell)
            took = time.perf_counter() - started
        print(f"{label}: " + ", ".join(f"{k} {v}" for k, v in found.items()) + f" ({took:.0f} s)")


if __name__ == "__main__":
    asyncio.run(main())
