"""Reminders on Telegram, through python-telegram-bot and the fake Bot API: "remind me in 2
minutes to stretch" to the agent, the Create button, and one reminder message, even with
Lancelot down when it fell due and started twice after."""

from __future__ import annotations

from pathlib import Path

from core.scheduler import Scheduler
from tests.fakes.calendar import CalendarClock, utc
from tests.fakes.scheduled_app import write_jobs
from tests.fakes.scripted_model import ScriptedRouter, call, final
from tests.fakes.telegram import FakeTelegram

from .harness import Running, eventually, running, settings_for

JOBS = """
  health_sweep:
    run: builtin:health_sweep
    every_seconds: 86400
    enabled: false
"""


def _reminders(tg: FakeTelegram) -> list[str]:
    return [m["plain_text"] for m in tg.sent if m["plain_text"].startswith("Reminder\n")]


async def _caught_up(lancelot: Running) -> Scheduler:
    scheduler = lancelot.app.scheduler
    await scheduler.started.wait()
    await scheduler.run_pending()
    return scheduler


async def test_remind_me_in_two_minutes_from_telegram_comes_once(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    jobs = write_jobs(tmp_path / "jobs.yaml", JOBS)
    settings = settings_for(tg, home, LANCELOT_SCHEDULER_JOBS_FILE=str(jobs))
    clock = CalendarClock(utc(2026, 11, 23, 14, 0))
    model = ScriptedRouter(
        [
            call("propose_job", when="in 2 minutes", what="stretch"),
            final("I sent you a card for it: tap Create."),
        ]
    )
    async with running(tg, settings, clock=clock, models=model) as lancelot:
        card = await lancelot.say("remind me in 2 minutes to stretch")
        assert card["plain_text"].startswith("Create this reminder?")
        assert "Mon 23 Nov 14:02 (UTC)" in card["plain_text"]
        buttons = card["reply_markup"]["inline_keyboard"]
        create = next(b for row in buttons for b in row if b["text"] == "Create")
        await tg.wait_for_sent(2)  # the agent's answer
        tg.press_button(card["message_id"], create["callback_data"])
        await eventually(lambda: tg.sent[0]["edits"] >= 1)
        assert tg.sent[0]["plain_text"].startswith("Reminder created")
    # Down from 14:00:30 to 15:00: the 14:02 reminder comes once at the next start...
    clock.set(utc(2026, 11, 23, 15, 0))
    async with running(tg, settings, clock=clock, models=model) as lancelot:
        await _caught_up(lancelot)
        await eventually(lambda: len(_reminders(tg)) == 1)
    assert "stretch" in _reminders(tg)[0]
    # ...and never again.
    clock.advance(600)
    async with running(tg, settings, clock=clock, models=model) as lancelot:
        await _caught_up(lancelot)
        before = len(tg.sent)
        await lancelot.say("/jobs")
    assert len(tg.sent) == before + 1
    assert len(_reminders(tg)) == 1
