"""/jobs from the phone: next runs and last outcomes, Run now / Pause / Resume buttons that
work once each, and presses nobody issued are refused."""

from __future__ import annotations

from pathlib import Path

from bot.app import assemble
from core.config import load_settings
from core.events import ButtonPress
from core.scheduler import JobContext
from tests.fakes.calendar import CalendarClock, utc
from tests.fakes.channel import MemoryChannel
from tests.fakes.owner import CHAT, OWNER, say, tap
from tests.fakes.scheduled_app import receipts, scheduled_app, scheduler, write_jobs

JOBS = """
  tick:
    run: builtin:count
    every_seconds: 300
  report:
    run: builtin:count
    cron: "0 8 * * *"
"""


async def test_jobs_card_buttons_run_pause_resume(tmp_path: Path) -> None:
    clock = CalendarClock(utc(2026, 11, 23, 9, 1))
    ran: list[tuple[str, str]] = []

    async def count(ctx: JobContext) -> str:
        ran.append((ctx.job, ctx.trigger))
        return "counted"

    phone = MemoryChannel()
    jobs = write_jobs(tmp_path / "jobs.yaml", JOBS)
    async with scheduled_app(
        tmp_path / "home", clock, jobs, channels=(phone,), runners={"builtin:count": count}
    ) as app:
        card = await say(app, phone, "/jobs")
        assert "tick (every 300 s): next 09:05; last: never run" in card.body
        assert "report (cron 0 8 * * * (UTC)): next tomorrow 08:00" in card.body
        assert [b.label for b in card.buttons] == [
            "Run now: tick", "Pause: tick", "Run now: report", "Pause: report",
        ]  # fmt: skip

        paused = await tap(app, phone, card, "Pause: tick")
        assert paused is not None
        assert "tick (every 300 s): paused" in paused.body
        clock.advance(3600)
        await scheduler(app).run_pending()
        assert ran == []  # the paused tick never ran (and the report is not due till 08:00)
        assert "Resume: tick" in [b.label for b in paused.buttons]

        resumed = await tap(app, phone, paused, "Resume: tick")
        assert resumed is not None
        assert "tick (every 300 s): next 10:05" in resumed.body

        after_run = await tap(app, phone, resumed, "Run now: report")
        assert after_run is not None
        assert ran == [("report", "manual")]
        assert "report (cron 0 8 * * * (UTC)): next tomorrow 08:00; last: ok" in (after_run.body)
        names = [r.action_type for r in await receipts(app, "job_paused")]
        names += [r.action_type for r in await receipts(app, "job_resumed")]
        assert names == ["job_paused", "job_resumed"]

        # The first card's buttons were spent by the first tap; a forged token never worked.
        ref = next(r for r, c in phone.delivered if c.correlation_id == card.correlation_id)
        stale = next(b.action_token for b in card.buttons if b.label == "Run now: tick")
        for token in (stale, "A" * 32, "not-a-token"):
            await app.bus.publish(ButtonPress(phone.name, OWNER, CHAT, ref, token))
        await app.bus.drained()
        refused = await receipts(app, "button_refused")
        assert sorted(r.action_name for r in refused) == ["already used", "forged", "malformed"]
        assert ran == [("report", "manual")]  # nothing else ran


async def test_run_now_is_not_offered_on_a_disabled_job_and_a_skipped_run_says_so(
    tmp_path: Path,
) -> None:
    clock = CalendarClock(utc(2026, 11, 23, 9, 1))
    ran: list[str] = []

    async def count(ctx: JobContext) -> str:
        ran.append(ctx.job)
        return "counted"

    jobs = write_jobs(
        tmp_path / "jobs.yaml",
        JOBS + "  resting:\n    run: builtin:count\n    every_seconds: 60\n    enabled: false\n"
        "  mover:\n    run: builtin:count\n    every_seconds: 600\n    tier: T2\n",
    )
    phone = MemoryChannel()
    async with scheduled_app(
        tmp_path / "home", clock, jobs, channels=(phone,), runners={"builtin:count": count}
    ) as app:
        card = await say(app, phone, "/jobs")
        assert "resting (every 60 s): disabled" in card.body
        labels = [b.label for b in card.buttons]
        assert "Run now: resting" not in labels
        assert "Run now: mover" in labels
        after = await tap(app, phone, card, "Run now: mover")  # T2: it waits for an Approve
        assert after is not None
        assert "mover (run #1) skipped: a T2 job needs your approval" in after.body
        assert "Ran mover" not in after.body
        assert ran == []


async def test_before_the_scheduler_starts_jobs_says_so_not_unscheduled(tmp_path: Path) -> None:
    jobs = write_jobs(tmp_path / "jobs.yaml", JOBS)
    env = {"LANCELOT_HOME": str(tmp_path / "home"), "LANCELOT_SCHEDULER_JOBS_FILE": str(jobs)}
    clock = CalendarClock(utc(2026, 11, 23, 9, 1))
    phone = MemoryChannel()
    async with assemble(load_settings(environ=env), web=False, clock=clock) as app:
        await app.attach(phone)  # not marked ready: the scheduler waits for that to start
        early = await say(app, phone, "/jobs")
        app.health.mark_ready()
        await scheduler(app).started.wait()
        started = await say(app, phone, "/jobs")
    assert "tick (every 300 s): scheduled once Lancelot has started; last: never run" in (
        early.body
    )
    assert "not scheduled" not in early.body
    assert "tick (every 300 s): next 09:05" in started.body
