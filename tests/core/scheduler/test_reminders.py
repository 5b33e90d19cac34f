"""Reminders and schedules from chat: /remind, /jobs new and the agent's propose_job send a
card with Create / Cancel; a created job lives in scheduler.db, survives restarts, shows in
/jobs with Pause / Resume / Delete, and a one-off reminder is delivered exactly once through
the outbox, held by the Soul's quiet hours (22:00-07:00 UTC in the shipped Soul)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from core.events import ButtonPress, Card
from core.scheduler.store import SCHEMA, SchedulerStore
from tests.fakes.calendar import CalendarClock, utc
from tests.fakes.channel import MemoryChannel
from tests.fakes.owner import CHAT, OWNER, say, tap
from tests.fakes.scheduled_app import receipts, scheduled_app, scheduler, write_jobs
from tests.fakes.scripted_model import ScriptedRouter, call, final

JOBS = """
  health_sweep:
    run: builtin:health_sweep
    every_seconds: 86400
    enabled: false
"""


def _reminders(phone: MemoryChannel) -> list[Card]:
    return [card for _, card in phone.delivered if card.title == "Reminder"]


def _labels(card: Card) -> list[str]:
    return [b.label for b in card.buttons]


def _chat_jobs(home: Path) -> list[tuple[str, float | None, str | None, str]]:
    with sqlite3.connect(home / "scheduler.db") as db:
        return db.execute("SELECT name, at, cron, what FROM scheduler_chat_jobs").fetchall()


async def test_remind_in_two_minutes_is_created_and_delivered_once(tmp_path: Path) -> None:
    home, jobs = tmp_path / "home", write_jobs(tmp_path / "jobs.yaml", JOBS)
    clock = CalendarClock(utc(2026, 11, 23, 14, 0))
    phone = MemoryChannel()
    async with scheduled_app(home, clock, jobs, channels=(phone,), durable=True) as app:
        card = await say(app, phone, "/remind in 2 minutes stretch")
        assert card.title == "Create this reminder?"
        assert card.body == "stretch"
        fields = dict(card.fields)
        assert fields["Next"] == "Mon 23 Nov 14:02 (UTC)"
        assert fields["Repeats"] == "once"
        assert fields["Tier"].startswith("T0")
        assert _labels(card) == ["Create", "Cancel"]
        assert _chat_jobs(home) == []  # nothing exists before Create

        created = await tap(app, phone, card, "Create")
        assert created is not None
        assert created.title == "Reminder created"
        (row,) = _chat_jobs(home)
        assert row[1:] == (utc(2026, 11, 23, 14, 2).timestamp(), None, "stretch")

        listing = await say(app, phone, "/jobs")
        assert f"{row[0]} (once at 2026-11-23 14:02 (UTC)): next 14:02" in (listing.body)
        assert f"Delete: {row[0]}" in _labels(listing)

        clock.advance(60)
        await scheduler(app).run_pending()
        assert _reminders(phone) == []  # not yet
        clock.advance(61)
        await scheduler(app).run_pending()
        await scheduler(app).run_pending()
        (reminder,) = _reminders(phone)
        assert reminder.body == "stretch"
        assert dict(reminder.fields)["When"] == "Mon 23 Nov 14:02"
        (run,) = await receipts(app, "scheduled_job_run")
        assert run.action_name == row[0]
        (made,) = await receipts(app, "job_created")
        assert made.decoded("inputs")["tier"] == "T0"
    # Across a restart it is not delivered again.
    clock.advance(3600)
    phone = MemoryChannel()
    async with scheduled_app(home, clock, jobs, channels=(phone,), durable=True) as app:
        await scheduler(app).run_pending()
        assert _reminders(phone) == []


async def test_a_reminder_due_while_down_comes_once_after_start(tmp_path: Path) -> None:
    home, jobs = tmp_path / "home", write_jobs(tmp_path / "jobs.yaml", JOBS)
    clock = CalendarClock(utc(2026, 11, 23, 9, 0))
    phone = MemoryChannel()
    async with scheduled_app(home, clock, jobs, channels=(phone,), durable=True) as app:
        card = await say(app, phone, "/remind in 2 minutes to stretch")
        await tap(app, phone, card, "Create")
    clock.set(utc(2026, 11, 23, 11, 0))  # down from 09:00 to 11:00: the 09:02 time passed
    phone = MemoryChannel()
    async with scheduled_app(home, clock, jobs, channels=(phone,), durable=True) as app:
        await scheduler(app).run_pending()
        assert [c.body for c in _reminders(phone)] == ["stretch"]
        runs = await receipts(app, "scheduled_job_run")
        assert [r.decoded("inputs")["trigger"] for r in runs] == ["catch_up"]
    clock.advance(600)
    phone = MemoryChannel()
    async with scheduled_app(home, clock, jobs, channels=(phone,), durable=True) as app:
        await scheduler(app).run_pending()
        assert _reminders(phone) == []  # the second start delivers nothing
        assert len(await receipts(app, "scheduled_job_run")) == 1


async def test_a_time_already_past_is_refused(tmp_path: Path) -> None:
    home, jobs = tmp_path / "home", write_jobs(tmp_path / "jobs.yaml", JOBS)
    clock = CalendarClock(utc(2026, 11, 23, 14, 0))
    phone = MemoryChannel()
    async with scheduled_app(home, clock, jobs, channels=(phone,)) as app:
        card = await say(app, phone, "/remind today at 9am call Anna")
        assert card.title == "No reminder made"
        assert "Mon 23 Nov 09:00 has already passed (UTC)" in card.body
        assert card.buttons == ()
        card = await say(app, phone, "/remind sometime call Anna")
        assert card.title == "No reminder made"
        assert "/remind in 20 minutes stretch" in card.body  # says how
        card = await say(app, phone, "/remind in 5 minutes")
        assert card.body.startswith("What should I remind you of?")
        card = await say(app, phone, "/remind in 5 minutes " + "stretch " * 100)
        assert card.body == "Say what in at most 500 characters."
        assert await receipts(app, "job_proposed") == []
    assert _chat_jobs(home) == []


async def test_an_ambiguous_time_is_asked_back(tmp_path: Path) -> None:
    home, jobs = tmp_path / "home", write_jobs(tmp_path / "jobs.yaml", JOBS)
    clock = CalendarClock(utc(2026, 11, 23, 8, 0))
    phone = MemoryChannel()
    async with scheduled_app(home, clock, jobs, channels=(phone,)) as app:
        card = await say(app, phone, "/remind at 9 to call Anna")
        assert card.title == "Which time?"
        assert _labels(card) == ["Mon 23 Nov 09:00", "Mon 23 Nov 21:00", "Cancel"]
        assert _chat_jobs(home) == []
        picked = await tap(app, phone, card, "Mon 23 Nov 21:00")
        assert picked is not None
        assert picked.title == "Create this reminder?"
        assert dict(picked.fields)["Next"] == "Mon 23 Nov 21:00 (UTC)"
        await tap(app, phone, picked, "Create")
        (row,) = _chat_jobs(home)
        assert row[1:] == (utc(2026, 11, 23, 21, 0).timestamp(), None, "call Anna")

        dates = await say(app, phone, "/remind on 03/04 at 10am dentist")
        assert _labels(dates) == ["Thu 04 Mar 2027 10:00", "Sat 03 Apr 2027 10:00", "Cancel"]


async def test_cancel_creates_nothing_and_a_forged_create_is_refused(tmp_path: Path) -> None:
    home, jobs = tmp_path / "home", write_jobs(tmp_path / "jobs.yaml", JOBS)
    clock = CalendarClock(utc(2026, 11, 23, 14, 0))
    phone = MemoryChannel()
    async with scheduled_app(home, clock, jobs, channels=(phone,)) as app:
        card = await say(app, phone, "/remind in 10 minutes stretch")
        cancelled = await tap(app, phone, card, "Cancel")
        assert cancelled is not None
        assert cancelled.body == "Cancelled: nothing was created."
        # The card's Create is spent with it; a forged token never worked.
        ref = next(r for r, c in phone.delivered if c.correlation_id == card.correlation_id)
        spent = next(b.action_token for b in card.buttons if b.label == "Create")
        for token in (spent, "A" * 32):
            await app.bus.publish(ButtonPress(phone.name, OWNER, CHAT, ref, token))
        await app.bus.drained()
        refused = await receipts(app, "button_refused")
        assert sorted(r.action_name for r in refused) == ["already used", "forged"]
        assert [r.decoded("outputs")["why"] for r in await receipts(app, "job_not_created")] == [
            "cancelled by the owner"
        ]
        clock.advance(3600)
        await scheduler(app).run_pending()
        assert _reminders(phone) == []
    assert _chat_jobs(home) == []


async def test_quiet_hours_hold_a_reminder_until_they_end(tmp_path: Path) -> None:
    home, jobs = tmp_path / "home", write_jobs(tmp_path / "jobs.yaml", JOBS)
    clock = CalendarClock(utc(2026, 11, 23, 21, 55))
    phone = MemoryChannel()
    async with scheduled_app(home, clock, jobs, channels=(phone,), durable=True) as app:
        card = await say(app, phone, "/remind in 10 minutes stretch")
        await tap(app, phone, card, "Create")
        clock.set(utc(2026, 11, 23, 22, 5))
        await scheduler(app).run_pending()
        assert _reminders(phone) == []  # 22:05 is within the Soul's quiet hours
        (held,) = await receipts(app, "scheduled_job_run")
        assert held.decoded("outputs")["detail"] == "held for quiet hours until 07:00"
        clock.set(utc(2026, 11, 24, 6, 59))
        await scheduler(app).run_pending()
        assert _reminders(phone) == []
        clock.set(utc(2026, 11, 24, 7, 0, 5))
        await scheduler(app).run_pending()
        await scheduler(app).run_pending()
        assert [c.body for c in _reminders(phone)] == ["stretch"]


async def test_repeating_jobs_and_pause_resume_delete_work(tmp_path: Path) -> None:
    home, jobs = tmp_path / "home", write_jobs(tmp_path / "jobs.yaml", JOBS)
    clock = CalendarClock(utc(2026, 11, 23, 12, 0))  # a Monday
    phone = MemoryChannel()
    async with scheduled_app(home, clock, jobs, channels=(phone,)) as app:
        card = await say(app, phone, "/jobs new every Monday at 8 summarise the logs")
        assert card.title == "Which time?"
        picked = await tap(app, phone, card, "every Monday at 08:00")
        assert picked is not None
        assert dict(picked.fields)["Next"] == "Mon 30 Nov 08:00 (UTC)"
        assert dict(picked.fields)["Repeats"] == "every Monday at 08:00"
        await tap(app, phone, picked, "Create")
        card = await say(app, phone, "/remind every day at 15:00 drink water")
        await tap(app, phone, card, "Create")
    # Both survive a restart and show in /jobs.
    async with scheduled_app(home, clock, jobs, channels=(phone,)) as app:
        names = {what: name for name, _, _, what in _chat_jobs(home)}
        water = names["drink water"]
        listing = await say(app, phone, "/jobs")
        assert f"{water} (cron 0 15 * * * (UTC)): next 15:00" in listing.body
        paused = await tap(app, phone, listing, f"Pause: {water}")
        assert paused is not None
        assert f"{water} (cron 0 15 * * * (UTC)): paused" in paused.body
        clock.set(utc(2026, 11, 23, 15, 1))
        await scheduler(app).run_pending()
        assert _reminders(phone) == []  # paused
        resumed = await tap(app, phone, paused, f"Resume: {water}")
        assert resumed is not None
        assert "next tomorrow 15:00" in resumed.body
        clock.set(utc(2026, 11, 24, 15, 0, 5))
        await scheduler(app).run_pending()
        assert [c.body for c in _reminders(phone)] == ["drink water"]
        deleted = await tap(app, phone, resumed, f"Delete: {water}")
        assert deleted is not None
        assert f"Deleted {water}." in deleted.body
        assert water not in deleted.body.split("\n\n")[0]
        assert (await receipts(app, "job_deleted"))[0].action_name == water
    clock.set(utc(2026, 11, 25, 15, 0, 5))
    phone = MemoryChannel()
    async with scheduled_app(home, clock, jobs, channels=(phone,)) as app:
        await scheduler(app).run_pending()
        assert _reminders(phone) == []  # deleted stays deleted
        assert [what for _, _, _, what in _chat_jobs(home)] == ["summarise the logs"]


async def test_the_agent_proposes_a_reminder_the_owner_creates(tmp_path: Path) -> None:
    home, jobs = tmp_path / "home", write_jobs(tmp_path / "jobs.yaml", JOBS)
    clock = CalendarClock(utc(2026, 11, 23, 14, 0))
    phone = MemoryChannel()
    model = ScriptedRouter(
        [
            call("propose_job", when="in 2 minutes", what="stretch"),
            final("I sent you a card: tap Create.", [("propose_job", "in 2 minutes: stretch")]),
        ]
    )
    async with scheduled_app(home, clock, jobs, channels=(phone,), models=model) as app:
        proposal = await say(app, phone, "remind me in 2 minutes to stretch")
        assert proposal.title == "Create this reminder?"
        assert dict(proposal.fields)["Next"] == "Mon 23 Nov 14:02 (UTC)"
        _, answer = await phone.next_card()
        assert "tap Create" in answer.body
        (run,) = await receipts(app, "tool_run")
        assert run.action_name == "schedule.propose"
        await tap(app, phone, proposal, "Create")
        clock.advance(125)
        await scheduler(app).run_pending()
        assert [c.body for c in _reminders(phone)] == ["stretch"]


async def test_times_are_read_in_the_owners_timezone(tmp_path: Path) -> None:
    home, jobs = tmp_path / "home", write_jobs(tmp_path / "jobs.yaml", JOBS)
    clock = CalendarClock(utc(2026, 11, 23, 14, 0))  # 15:00 in Paris
    phone = MemoryChannel()
    env = {"LANCELOT_SCHEDULER_TIMEZONE": "Europe/Paris"}
    async with scheduled_app(home, clock, jobs, channels=(phone,), env=env) as app:
        card = await say(app, phone, "/remind at 9pm call Anna")
        assert dict(card.fields)["Next"] == "Mon 23 Nov 21:00 (Europe/Paris)"
        await tap(app, phone, card, "Create")
        past = await say(app, phone, "/remind today at 2:30pm call Anna")  # 13:30 UTC
        assert "Mon 23 Nov 14:30 has already passed (Europe/Paris)" in past.body
    (row,) = _chat_jobs(home)
    assert row[1] == utc(2026, 11, 23, 20, 0).timestamp()


async def test_a_task_runs_through_the_agent_after_the_owners_approve(tmp_path: Path) -> None:
    home, jobs = tmp_path / "home", write_jobs(tmp_path / "jobs.yaml", JOBS)
    clock = CalendarClock(utc(2026, 11, 23, 12, 0))
    phone = MemoryChannel()
    model = ScriptedRouter([final("The logs are quiet: 3 runs, no failures.")])
    async with scheduled_app(home, clock, jobs, channels=(phone,), models=model) as app:
        card = await say(app, phone, "/jobs new every day at 15:00 summarise the logs")
        assert card.title == "Create this job?"
        fields = dict(card.fields)
        assert fields["Does"] == "the agent does it in this chat"
        assert fields["Tier"].startswith("T2 (each run waits for your Approve")
        created = await tap(app, phone, card, "Create")
        assert created is not None
        assert created.title == "Job created"

        clock.set(utc(2026, 11, 23, 15, 0, 5))
        await scheduler(app).run_pending()
        _, asking = await phone.next_card()
        assert asking.title.startswith("Run summarise-the-logs-")
        assert model.calls == []  # nothing ran before the Approve
        await tap(app, phone, asking, "Approve")
        _, answer = await phone.next_card()
        assert "The logs are quiet" in answer.body
        (asked,) = [c for c in model.calls if c.request.messages]
        assert any("summarise the logs" in m.content for m in asked.request.messages)
        inbound = await receipts(app, "inbound")
        assert inbound[-1].decoded("inputs")["text"] == "summarise the logs"

        # At night the approval card waits for the morning.
        card = await say(app, phone, "/jobs new every day at 23:00 check the backups")
        await tap(app, phone, card, "Create")
        clock.set(utc(2026, 11, 23, 23, 0, 5))
        await scheduler(app).run_pending()
        assert phone.pending() == 0
        clock.set(utc(2026, 11, 24, 7, 0, 5))
        await scheduler(app).run_pending()
        _, morning = await phone.next_card()
        assert morning.title.startswith("Run check-the-backups-")


async def test_reminders_kept_before_tasks_existed_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "scheduler.db"
    with sqlite3.connect(path) as db:
        for step in SCHEMA.steps[:2]:
            assert isinstance(step, str)
            db.executescript(step)
        db.execute(
            "INSERT INTO scheduler_chat_jobs VALUES ('stretch-1a2b', 1.0, NULL, 'UTC', "
            "'stretch', 'T0', 0.5)"
        )
        db.execute("PRAGMA user_version = 2")
    store = SchedulerStore(path)
    await store.open()
    try:
        (row,) = await store.chat_jobs()
    finally:
        await store.close()
    assert (row.name, row.what, row.kind, row.chat) == ("stretch-1a2b", "stretch", "reminder", "")


async def test_a_reminder_cut_short_by_a_crash_comes_once_after_start(tmp_path: Path) -> None:
    home, jobs = tmp_path / "home", write_jobs(tmp_path / "jobs.yaml", JOBS)
    clock = CalendarClock(utc(2026, 11, 23, 9, 0))
    phone = MemoryChannel()
    async with scheduled_app(home, clock, jobs, channels=(phone,), durable=True) as app:
        card = await say(app, phone, "/remind in 2 minutes stretch")
        await tap(app, phone, card, "Create")
    ((name, at, _, _),) = _chat_jobs(home)
    # What kill -9 right after the run was claimed leaves: the schedule moved on, the run
    # 'running', no card in the outbox.
    with sqlite3.connect(home / "scheduler.db") as db:
        db.execute("UPDATE scheduler_jobs SET next_run_at = NULL WHERE name = ?", (name,))
        db.execute(
            "INSERT INTO scheduler_runs (job, scheduled_for, started_at, trigger, outcome)"
            " VALUES (?, ?, ?, 'schedule', 'running')",
            (name, at, at),
        )
    clock.set(utc(2026, 11, 23, 9, 5))
    once = [("stretch", "Mon 23 Nov 09:02")]
    for expected in (once, []):  # once after the start, never again
        phone = MemoryChannel()
        async with scheduled_app(home, clock, jobs, channels=(phone,), durable=True) as app:
            await scheduler(app).run_pending()
            found = [(c.body, dict(c.fields)["When"]) for c in _reminders(phone)]
            assert found == expected
        clock.advance(600)
