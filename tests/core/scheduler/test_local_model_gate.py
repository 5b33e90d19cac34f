"""A job that needs the local model waits for it in the real app: the gate reads the local
model's health check, which says whether the model is there."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from core.scheduler import JobContext
from tests.ci import require_module
from tests.fakes.calendar import CalendarClock
from tests.fakes.scheduled_app import scheduled_app, scheduler, write_jobs

JOBS = """
  labeller:
    run: builtin:label
    every_seconds: 60
    needs_local_model: true
"""


async def label(ctx: JobContext) -> str:
    return "labelled"


def _history(home: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(home / "scheduler.db") as db:
        rows = db.execute(
            "SELECT outcome, detail FROM scheduler_runs WHERE job = 'labeller' ORDER BY id"
        ).fetchall()
    return [(str(outcome), str(detail)) for outcome, detail in rows]


async def test_a_job_that_needs_the_local_model_runs_once_the_model_is_there(
    tmp_path: Path,
) -> None:
    require_module("llama_cpp", needs="the local extra (pip install -e '.[local]')")
    home, jobs = tmp_path / "home", write_jobs(tmp_path / "jobs.yaml", JOBS)
    gguf = tmp_path / "model.gguf"
    env = {"FEATURE_LOCAL_MODEL": "true", "LANCELOT_LOCAL_MODEL": str(gguf)}
    clock = CalendarClock(time.time())
    async with scheduled_app(home, clock, jobs, env=env, runners={"builtin:label": label}) as app:
        clock.advance(60)
        await scheduler(app).run_pending()
        await scheduler(app).idle()
        absent = _history(home)
        gguf.write_bytes(b"GGUF")  # put in place: usable, loaded at its first real use
        clock.advance(60)
        await scheduler(app).run_pending()
        await scheduler(app).idle()
        there = _history(home)[len(absent) :]
    assert absent, "the job was due"
    assert all("local model" in detail for _, detail in absent), absent
    assert not any(detail == "labelled" for _, detail in absent)
    assert there == [("ok", "labelled")], there
