"""Health alerts across restarts: a restart while degraded does not alert again, and the
recovery after the restart is announced exactly once."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from bot.app import Lancelot
from core.events import CardKind
from tests.fakes.calendar import CalendarClock, utc
from tests.fakes.channel import MemoryChannel
from tests.fakes.owner import tap
from tests.fakes.scheduled_app import receipts, scheduled_app, write_jobs

JOBS = """
  quiet:
    run: builtin:health_sweep
    cron: "0 3 * * *"
"""
DEGRADED, RECOVERED = "Health degraded", "Recovered: every health check passes"


class Switch:
    """A health check the test turns bad and good."""

    def __init__(self, reason: str | None = None) -> None:
        self.reason = reason

    async def __call__(self) -> str | None:
        return self.reason


def _alerts(phone: MemoryChannel) -> list[str]:
    return [c.title for _, c in phone.delivered if c.kind is CardKind.ALERT]


async def _kinds(app: Lancelot) -> list[str]:
    found = []
    for kind in ("health_ok", "health_degraded", "health_recovered"):
        found += [(r.seq, kind) for r in await receipts(app, kind)]
    return [kind for _, kind in sorted(found)]


async def _run_into_trouble(
    home: Path, clock: CalendarClock, jobs: Path, phone: MemoryChannel, widget: Switch
) -> None:
    """A first run: healthy, then the widget gets stuck (one alert), then it stops."""
    async with scheduled_app(home, clock, jobs, channels=(phone,)) as first:
        first.health.register("widget", widget)
        await first.health.tick()
        widget.reason = "widget: stuck"
        await first.health.tick()


async def test_a_restart_while_degraded_neither_repeats_nor_loses_an_alert(
    tmp_path: Path,
) -> None:
    home, jobs = tmp_path / "home", write_jobs(tmp_path / "jobs.yaml", JOBS)
    clock = CalendarClock(utc(2026, 11, 23, 9, 0))
    phone = MemoryChannel()  # the owner's phone outlives Lancelot's process
    widget = Switch()
    await _run_into_trouble(home, clock, jobs, phone, widget)
    assert _alerts(phone) == [DEGRADED]

    clock.advance(300)  # down for five minutes, still degraded when it comes back
    async with scheduled_app(home, clock, jobs, channels=(phone,)) as second:
        second.health.register("widget", widget)
        for _ in range(3):
            clock.advance(30)
            await second.health.tick()
        assert _alerts(phone) == [DEGRADED]  # the spell was already announced
        widget.reason = None
        await second.health.tick()
        await second.health.tick()
        assert _alerts(phone) == [DEGRADED, RECOVERED]
        recovered = [c for _, c in phone.delivered if c.kind is CardKind.ALERT][-1]
        assert recovered.body == "Degraded for 6 min, seen on 4 checks."

    async with scheduled_app(home, clock, jobs, channels=(phone,)) as third:
        third.health.register("widget", widget)
        await third.health.tick()  # healthy before and after the restart: nothing to say
        assert _alerts(phone) == [DEGRADED, RECOVERED]
        assert await _kinds(third) == ["health_ok", "health_degraded", "health_recovered"]


async def test_a_spell_that_healed_while_down_gets_one_recovery_notice(tmp_path: Path) -> None:
    home, jobs = tmp_path / "home", write_jobs(tmp_path / "jobs.yaml", JOBS)
    clock = CalendarClock(utc(2026, 11, 23, 9, 0))
    phone = MemoryChannel()
    widget = Switch("widget: stuck")
    async with scheduled_app(home, clock, jobs, channels=(phone,)) as first:
        first.health.register("widget", widget)
        await first.health.tick()
    with sqlite3.connect(home / "state.db") as db:
        [(saved,)] = db.execute("SELECT data FROM health_alert_state").fetchall()
    assert '"failing":["widget"]' in saved  # which checks were failing is on disk

    widget.reason = None
    clock.advance(120)
    async with scheduled_app(home, clock, jobs, channels=(phone,)) as second:
        second.health.register("widget", widget)
        for _ in range(3):
            await second.health.tick()
        assert _alerts(phone) == [DEGRADED, RECOVERED]
        assert await _kinds(second) == ["health_degraded", "health_recovered"]


async def test_the_alert_cards_buttons_work_after_a_restart(tmp_path: Path) -> None:
    home, jobs = tmp_path / "home", write_jobs(tmp_path / "jobs.yaml", JOBS)
    clock = CalendarClock(utc(2026, 11, 23, 9, 0))
    phone = MemoryChannel()
    widget = Switch()
    await _run_into_trouble(home, clock, jobs, phone, widget)
    (card,) = [c for _, c in phone.delivered if c.kind is CardKind.ALERT]

    async with scheduled_app(home, clock, jobs, channels=(phone,)) as second:
        second.health.register("widget", widget)
        await second.health.tick()
        edited = await tap(second, phone, card, "Acknowledge")
        assert edited is not None
        assert "Acknowledged by the owner." in edited.body
        assert "widget: stuck" in edited.body
        assert edited.buttons == ()
