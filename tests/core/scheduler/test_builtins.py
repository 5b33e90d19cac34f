"""The built-in jobs do real work: memory_cleanup forgets what expired, health_sweep ticks the
monitor, and the shipped jobs file declares the four default jobs."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from core.errors import InvalidToken
from core.scheduler import load_jobs
from tests.bot.test_cli import REPO
from tests.fakes.calendar import CalendarClock, utc
from tests.fakes.channel import MemoryChannel
from tests.fakes.owner import say, tap
from tests.fakes.scheduled_app import receipts, scheduled_app, scheduler, write_jobs

JOBS = """
  memory_cleanup:
    run: builtin:memory_cleanup
    cron: "0 3 * * *"
  health_sweep:
    run: builtin:health_sweep
    every_seconds: 60
"""


def test_shipped_jobs_are_the_four_defaults() -> None:
    jobs = {j.name: j for j in load_jobs(REPO / "config" / "scheduler.yaml")}
    assert jobs["health_sweep"].every_seconds == 60
    assert jobs["memory_cleanup"].cron == "0 3 * * *"
    assert jobs["daily_digest"].cron == "0 8 * * *"
    rotation = jobs["credential_rotation"]
    assert (rotation.enabled, rotation.requires_approval, rotation.tier) == (False, True, "T3")
    moved = {j.name: j for j in load_jobs(REPO / "config" / "scheduler.yaml", digest_time="07:15")}
    assert moved["daily_digest"].cron == "15 7 * * *"


async def test_memory_cleanup_prunes_expired_tokens_and_old_outbox_rows(tmp_path: Path) -> None:
    clock = CalendarClock(time.time())
    phone = MemoryChannel()
    jobs = write_jobs(tmp_path / "jobs.yaml", JOBS)
    async with scheduled_app(tmp_path / "home", clock, jobs, channels=(phone,)) as app:
        card = await say(app, phone, "/jobs")
        await app.tokens.issue("jobs.run", {"job": "x"}, "old-card", ttl=-3 * 86400)
        old = time.time() - 40 * 86400
        await app.state.execute(
            "INSERT INTO outbox (key, channel, chat_id, kind, correlation_id, card, parts,"
            " created_at, updated_at, state) VALUES ('k', 'memory', 'c', 'send', 'x', '{}', 1,"
            " ?, ?, 'delivered')",
            (old, old),
        )
        edited = await tap(app, phone, card, "Run now: memory_cleanup")
        assert edited is not None
        done = await receipts(app, "scheduled_job_run")
        assert '"detail":"pruned 1 token(s), 1 outbox row(s), 0 run record(s); memory: ' in (
            done[-1].outputs
        )
        async with app.state.execute(
            "SELECT COUNT(*) FROM action_tokens WHERE card_id = 'old-card'"
        ) as cur:
            assert (await cur.fetchone()) == (0,)
        # The /jobs card it was run from got fresh buttons (its own tokens were not pruned).
        again = await tap(app, phone, edited, "Pause: health_sweep")
        assert again is not None
        assert "health_sweep (every 60 s): paused" in again.body


async def test_health_sweep_runs_the_checks(tmp_path: Path) -> None:
    clock = CalendarClock(utc(2026, 11, 23, 9, 0, 30))
    jobs = write_jobs(tmp_path / "jobs.yaml", JOBS)
    async with scheduled_app(tmp_path / "home", clock, jobs) as app:
        before = (await app.health.snapshot()).last_health_tick_at
        clock.advance(60)
        assert await scheduler(app).run_pending() == 1
        after = (await app.health.snapshot()).last_health_tick_at
        assert after is not None
        assert before is None or after > before
        done = await receipts(app, "scheduled_job_run")
        assert '"detail":"all checks pass"' in done[-1].outputs


async def test_credential_rotation_revokes_the_unopened_receipt_links(tmp_path: Path) -> None:
    rotation = """
  credential_rotation:
    run: builtin:credential_rotation
    cron: "0 4 1 * *"
    requires_approval: true
    tier: T3
"""
    clock = CalendarClock(time.time())
    jobs = write_jobs(tmp_path / "jobs.yaml", rotation)
    async with scheduled_app(tmp_path / "home", clock, jobs) as app:
        opened, unopened = await app.viewer.issue_link(), await app.viewer.issue_link()
        await app.viewer.redeem(opened)
        await scheduler(app).run_now("credential_rotation", approved=True)
        await scheduler(app).idle()
        done = await receipts(app, "scheduled_job_run")
        assert '"detail":"revoked 1 unopened receipt link(s)"' in done[-1].outputs
        with pytest.raises(InvalidToken, match="unknown"):
            await app.viewer.redeem(unopened)
