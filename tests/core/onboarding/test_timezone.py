"""The timezone chosen in onboarding: reminders and quiet hours follow it at once, the jobs of
scheduler.yaml from the next start."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.calendar import CalendarClock, utc
from tests.fakes.channel import MemoryChannel
from tests.fakes.owner import say, tap
from tests.fakes.scheduled_app import receipts, scheduled_app, scheduler, write_jobs

JOBS = """
  health_sweep:
    run: builtin:health_sweep
    every_seconds: 86400
    enabled: false
"""


async def test_reminders_and_quiet_hours_follow_the_chosen_timezone(tmp_path: Path) -> None:
    home, jobs = tmp_path / "home", write_jobs(tmp_path / "jobs.yaml", JOBS)
    clock = CalendarClock(utc(2026, 11, 23, 13, 55))  # 22:55 in Tokyo, quiet there, not in UTC
    phone = MemoryChannel()
    async with scheduled_app(home, clock, jobs, channels=(phone,), durable=True) as app:
        await say(app, phone, "/start")
        provider = await say(app, phone, "Ana")
        await tap(app, phone, provider, "Continue")
        await phone.next_card()
        await say(app, phone, "Tokyo")
        assert (await say(app, phone, "done")).title == "Onboarding done"

        card = await say(app, phone, "/remind in 10 minutes stretch")
        assert dict(card.fields)["Next"] == "Mon 23 Nov 23:05 (Asia/Tokyo)"
        await tap(app, phone, card, "Create")
        clock.set(utc(2026, 11, 23, 14, 5))
        await scheduler(app).run_pending()
        (held,) = await receipts(app, "scheduled_job_run")
        assert held.decoded("outputs")["detail"] == "held for quiet hours until 07:00"
        assert [c for _, c in phone.delivered if c.title == "Reminder"] == []
        clock.set(utc(2026, 11, 23, 22, 0, 5))  # 07:00 in Tokyo
        await scheduler(app).run_pending()
        await scheduler(app).run_pending()
        assert [c.body for _, c in phone.delivered if c.title == "Reminder"] == ["stretch"]
        assert scheduler(app).specs["health_sweep"].timezone == "UTC"  # loaded before
    async with scheduled_app(home, clock, jobs) as app:
        assert scheduler(app).specs["health_sweep"].timezone == "Asia/Tokyo"
