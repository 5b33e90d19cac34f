"""A reminder made in Google Chat: /remind answered on the event with Create / Cancel, the
click creating it, and the reminder pushed into the owner's space once when it falls due."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.calendar import CalendarClock, utc
from tests.fakes.gchat import FakeGoogle, buttons, texts
from tests.fakes.scheduled_app import write_jobs

from .harness import SPACE, running, settings_for

JOBS = """
  health_sweep:
    run: builtin:health_sweep
    every_seconds: 86400
    enabled: false
"""


def _reminders(google: FakeGoogle) -> list[str]:
    found = []
    for message in google.in_space(SPACE):
        shown = texts(message.body)
        if shown and shown[0] == "Reminder":
            found.append("\n".join(shown))
    return found


async def test_a_reminder_made_in_google_chat_is_pushed_once(
    google: FakeGoogle, tmp_path: Path
) -> None:
    jobs = write_jobs(tmp_path / "jobs.yaml", JOBS)
    settings = settings_for(google, tmp_path / "home", LANCELOT_SCHEDULER_JOBS_FILE=str(jobs))
    clock = CalendarClock(utc(2026, 11, 23, 14, 0))
    async with running(google, settings, clock=clock) as lancelot:
        answer = await lancelot.owner.say("/remind in 2 minutes stretch")
        assert answer.status == 200
        await google.wait_for(lambda: any(buttons(m.body) for m in google.in_space(SPACE)))
        [card] = [m for m in google.in_space(SPACE) if buttons(m.body)]
        assert [b["text"] for b in buttons(card.body)] == ["Create", "Cancel"]
        assert any("Mon 23 Nov 14:02 (UTC)" in t for t in texts(card.body))
        clicked = await lancelot.owner.click(card, "Create")
        assert clicked.kind == "UPDATE_MESSAGE"
        assert any(t.startswith("Created stretch-") for t in texts(card.body))

        scheduler = lancelot.app.scheduler
        await scheduler.started.wait()
        clock.advance(125)
        await scheduler.run_pending()
        await google.wait_for(lambda: len(_reminders(google)) == 1)
        clock.advance(600)
        await scheduler.run_pending()
    [reminder] = _reminders(google)
    assert "stretch" in reminder
