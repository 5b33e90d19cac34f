"""The scheduler in real `lancelot run` processes: the APScheduler timer fires, a restart
catches up once within grace and records misses beyond it, and a broken jobs file exits 2."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.bot.test_cli import REPO, env_for, lancelot

JOBS = """timezone: UTC
jobs:
  lenient:
    run: builtin:health_sweep
    every_seconds: 2
    grace_seconds: 60
  strict:
    run: builtin:health_sweep
    every_seconds: 2
    grace_seconds: 0
"""


def _runs(home: Path) -> list[tuple[str, float, str, str, int]]:
    with sqlite3.connect(home / "scheduler.db") as db:
        return db.execute(
            "SELECT job, scheduled_for, trigger, outcome, missed FROM scheduler_runs ORDER BY id"
        ).fetchall()


def _ready(port: str) -> dict[str, object]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health/ready", timeout=2) as r:
            return dict(json.loads(r.read()))
    except urllib.error.HTTPError as exc:  # 503 while degraded still carries the snapshot
        return dict(json.loads(exc.read()))
    except OSError:
        return {}


def _serve(env: dict[str, str], until: object) -> None:
    """`lancelot run` until `until()` is true, then SIGTERM; it must exit cleanly."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "bot.cli", "run"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=REPO,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not until():  # type: ignore[operator]
            time.sleep(0.1)
    finally:
        proc.terminate()
        _, errors = proc.communicate(timeout=30)
    assert proc.returncode == 0, errors


@pytest.mark.slow
def test_restart_catches_up_once_and_records_misses(tmp_path: Path) -> None:
    home = tmp_path / "home"
    jobs = tmp_path / "scheduler.yaml"
    jobs.write_text(JOBS)
    env = env_for(home, LANCELOT_SCHEDULER_JOBS_FILE=str(jobs))
    port = env["LANCELOT_WEB_PORT"]

    def fired_on_schedule() -> bool:
        running = _ready(port).get("scheduler_running") is True
        return running and any(r[2] == "schedule" and r[3] == "ok" for r in _runs(home))

    _serve(env, fired_on_schedule)
    stopped = time.time()
    time.sleep(5)  # down: two or three runs of each job fall in here
    _serve(env, lambda: _ready(port).get("scheduler_running") is True)
    runs = _runs(home)
    catch_up = [
        (job, outcome, missed)
        for job, at, trigger, outcome, missed in runs
        if trigger == "catch_up"
    ]
    assert len(catch_up) == 2
    lenient = next(r for r in catch_up if r[0] == "lenient")
    strict = next(r for r in catch_up if r[0] == "strict")
    assert lenient[1] == "ok"  # ran once, the others coalesced into it
    assert lenient[2] >= 1
    assert strict[1] == "missed"  # beyond its grace: recorded, not run
    assert strict[2] >= 2
    scheduled = [(job, at) for job, at, trigger, *_ in runs]
    assert len(scheduled) == len(set(scheduled))  # no scheduled time ran twice
    assert all(at <= stopped + 10 for _, at in scheduled)


def test_broken_jobs_file_exits_2_with_one_line(tmp_path: Path) -> None:
    jobs = tmp_path / "scheduler.yaml"
    jobs.write_text("jobs:\n  nightly:\n    run: builtin:memory_cleanup\n    cron: '61 3 * * *'\n")
    result = lancelot("run", env=env_for(tmp_path / "home", LANCELOT_SCHEDULER_JOBS_FILE=str(jobs)))
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1
    assert "jobs.nightly" in result.stderr
    assert "Traceback" not in result.stderr
