"""Scheduled skills act as autonomous work: a harmless command runs, a destructive one waits
for an approval card instead of happening, and the kill switch stops every job."""

from __future__ import annotations

import json
from pathlib import Path

from core.events import CardKind
from tests.fakes.calendar import CalendarClock, utc
from tests.fakes.channel import MemoryChannel
from tests.fakes.owner import tap
from tests.fakes.scheduled_app import receipts, scheduled_app, scheduler, write_jobs

JOBS = """
  listing:
    run: skill:command_runner
    args: {command: "ls /workspace"}
    every_seconds: 60
    tier: T1
  sweep_old:
    run: skill:command_runner
    args: {command: "rm -r /workspace/old"}
    every_seconds: 60
    tier: T1
"""


async def test_scheduled_skill_runs_but_its_t3_step_waits_for_approval(tmp_path: Path) -> None:
    clock = CalendarClock(utc(2026, 11, 23, 9, 0, 30))
    phone = MemoryChannel()
    jobs = write_jobs(tmp_path / "jobs.yaml", JOBS)
    async with scheduled_app(tmp_path / "home", clock, jobs, channels=(phone,)) as app:
        (app.home / "workspace" / "old").mkdir()
        clock.advance(60)
        assert await scheduler(app).run_pending() == 2
        runs = {
            r.action_name: json.loads(r.outputs)["detail"]
            for r in await receipts(app, "scheduled_job_run")
        }
        assert runs["listing"].startswith("command_runner:")
        assert runs["sweep_old"].startswith("command_runner: waiting for your approval")
        assert (app.home / "workspace" / "old").exists()  # nothing irreversible happened unasked
        ran = [json.loads(r.inputs)["command"] for r in await receipts(app, "tool_run")]
        assert ran == ["ls /workspace"]
        approval = next(c for _, c in phone.delivered if c.kind is CardKind.APPROVAL)
        assert "rm -r /workspace/old" in approval.body
        await tap(app, phone, approval, "Approve")
        assert not (app.home / "workspace" / "old").exists()


async def test_kill_switch_skips_every_job_with_a_receipt(tmp_path: Path) -> None:
    clock = CalendarClock(utc(2026, 11, 23, 9, 0, 30))
    jobs = write_jobs(tmp_path / "jobs.yaml", JOBS)
    off = {"FEATURE_SCHEDULER": "0"}
    async with scheduled_app(tmp_path / "home", clock, jobs, env=off) as app:
        clock.advance(60)
        await scheduler(app).run_pending()
        skipped = await receipts(app, "scheduled_job_skipped")
        assert sorted(json.loads(r.metadata)["gate"] for r in skipped) == ["kill_switch"] * 2
        assert await receipts(app, "tool_run") == []
