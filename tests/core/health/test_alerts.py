"""Health as the owner sees it: one alert per transition (repeats folded), a recovery notice,
Details / Acknowledge / Mute 1 h, the dead-man's switch, /health and /health/ready."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import aiohttp
import pytest

from bot.app import Lancelot
from core.events import CardKind
from tests.fakes.calendar import CalendarClock, utc
from tests.fakes.channel import MemoryChannel
from tests.fakes.owner import say, tap
from tests.fakes.scheduled_app import receipts, scheduled_app, write_jobs

JOBS = """
  quiet:
    run: builtin:health_sweep
    cron: "0 3 * * *"
"""


class Switch:
    """A health check the test turns bad and good."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.reason: str | None = None

    async def __call__(self) -> str | None:
        return self.reason


def _alerts(phone: MemoryChannel) -> list[str]:
    return [c.title for _, c in phone.delivered if c.kind is CardKind.ALERT]


async def _types(app: Lancelot) -> list[str]:
    found = []
    for kind in ("health_ok", "health_degraded", "health_recovered"):
        found += [(r.seq, kind) for r in await receipts(app, kind)]
    return [kind for _, kind in sorted(found)]


async def test_degraded_then_recovered_gives_one_alert_each_way(tmp_path: Path) -> None:
    clock = CalendarClock(utc(2026, 11, 23, 9, 0))
    phone = MemoryChannel()
    widget = Switch("widget")
    jobs = write_jobs(tmp_path / "jobs.yaml", JOBS)
    async with scheduled_app(tmp_path / "home", clock, jobs, channels=(phone,)) as app:
        app.health.register("widget", widget)
        await app.health.tick()
        widget.reason = "widget: stuck"
        for _ in range(3):
            clock.advance(30)
            await app.health.tick()
        assert _alerts(phone) == ["Health degraded"]
        card = next(c for _, c in phone.delivered if c.kind is CardKind.ALERT)
        assert [b.label for b in card.buttons] == ["Details", "Acknowledge", "Mute 1 h"]
        assert "- widget: stuck" in card.body
        widget.reason = "widget: stuck harder"  # a new problem in the same spell: same card
        await app.health.tick()
        assert _alerts(phone) == ["Health degraded"]
        assert "widget: stuck harder" in phone.edits[-1][1].body
        clock.advance(600)
        widget.reason = None
        for _ in range(2):
            await app.health.tick()
        assert _alerts(phone) == ["Health degraded", "Recovered: every health check passes"]
        recovered = [c for _, c in phone.delivered if c.kind is CardKind.ALERT][-1]
        assert recovered.body.startswith("Degraded for 11 min")
        assert await _types(app) == ["health_ok", "health_degraded", "health_recovered"]


async def test_acknowledge_and_mute(tmp_path: Path) -> None:
    clock = CalendarClock(utc(2026, 11, 23, 9, 0))
    phone = MemoryChannel()
    widget = Switch("widget")
    jobs = write_jobs(tmp_path / "jobs.yaml", JOBS)
    async with scheduled_app(tmp_path / "home", clock, jobs, channels=(phone,)) as app:
        app.health.register("widget", widget)
        widget.reason = "widget: stuck"
        await app.health.tick()
        card = next(c for _, c in phone.delivered if c.kind is CardKind.ALERT)
        details = await tap(app, phone, card, "Details")
        assert details is not None
        assert "Problems seen: widget: stuck" in details.body
        acked = await tap(app, phone, details, "Acknowledge")
        assert acked is not None
        assert acked.buttons == ()
        assert "Acknowledged by the owner." in acked.body
        widget.reason = None
        await app.health.tick()
        widget.reason = "widget: stuck again"
        await app.health.tick()
        second = [c for _, c in phone.delivered if c.kind is CardKind.ALERT][-1]
        muted = await tap(app, phone, second, "Mute 1 h")
        assert muted is not None
        assert "Alerts muted until 10:00 (in 1 h)" in muted.body
        before = len(_alerts(phone))
        widget.reason = None
        await app.health.tick()
        widget.reason = "widget: and again"
        await app.health.tick()
        assert len(_alerts(phone)) == before  # muted: no cards...
        kinds = await _types(app)
        assert kinds[-2:] == ["health_recovered", "health_degraded"]  # ...receipts all the same
        clock.advance(3601)
        widget.reason = None
        await app.health.tick()
        assert _alerts(phone)[-1] == "Recovered: every health check passes"


async def test_dead_channel_alert_goes_to_the_other_channel(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    clock = CalendarClock(utc(2026, 11, 23, 9, 0))
    telegram, gchat = MemoryChannel("telegram"), MemoryChannel("gchat")
    watchdog = Switch("telegram")
    jobs = write_jobs(tmp_path / "jobs.yaml", JOBS)
    async with scheduled_app(tmp_path / "home", clock, jobs, channels=(telegram, gchat)) as app:
        app.health.register("telegram", watchdog)
        watchdog.reason = "telegram: no updates received for 300 s"
        await app.health.tick()
        assert _alerts(telegram) == []
        assert _alerts(gchat) == ["Health degraded"]
        watchdog.reason = None
        await app.health.tick()
        assert _alerts(telegram) == ["Recovered: every health check passes"]
    alone = MemoryChannel("telegram")
    with caplog.at_level(logging.WARNING, logger="core.health.alerts"):
        async with scheduled_app(tmp_path / "home2", clock, jobs, channels=(alone,)) as app:
            app.health.register("telegram", watchdog)
            watchdog.reason = "telegram: no updates received for 300 s"
            await app.health.tick()
    assert _alerts(alone) == []
    assert "HEALTH ALERT (no channel left to tell)" in caplog.text


async def test_health_card_and_readiness_json(tmp_path: Path) -> None:
    clock = CalendarClock(utc(2026, 11, 23, 9, 0))
    phone = MemoryChannel()
    jobs = write_jobs(tmp_path / "jobs.yaml", JOBS)
    async with scheduled_app(tmp_path / "home", clock, jobs, channels=(phone,), web=True) as app:
        await app.health.tick()
        async with aiohttp.ClientSession() as http:
            live = await http.get(f"{app.web_url}/health/live")
            assert live.status == 200
            ready = await http.get(f"{app.web_url}/health/ready")
            body = await ready.json()
        assert ready.status == 200
        assert body["ready"] is True
        assert body["onboarding_state"] == "NOT_STARTED"  # nobody has begun: jobs may run
        assert body["local_llm_ready"] is None
        assert body["scheduler_running"] is True
        assert body["last_scheduler_tick_at"] == "2026-11-23T09:00:00+00:00"
        assert body["last_health_tick_at"] is not None
        assert body["degraded_reasons"] == []
        assert body["degraded"] is False
        assert set(body) == {
            "ready", "degraded", "onboarding_state", "local_llm_ready", "scheduler_running",
            "last_health_tick_at", "last_scheduler_tick_at", "degraded_reasons", "timestamp",
            "started_at",
        }  # fmt: skip
        card = await say(app, phone, "/health")
        assert card.title == "Health: ready"
        assert dict(card.fields)["Scheduler"] == "running"
        assert dict(card.fields)["Onboarding"] == "NOT_STARTED"


async def test_concurrent_ticks_still_give_one_alert(tmp_path: Path) -> None:
    clock = CalendarClock(utc(2026, 11, 23, 9, 0))
    phone = MemoryChannel()
    widget = Switch("widget")
    jobs = write_jobs(tmp_path / "jobs.yaml", JOBS)
    async with scheduled_app(tmp_path / "home", clock, jobs, channels=(phone,)) as app:
        app.health.register("widget", widget)
        widget.reason = "widget: stuck"
        await asyncio.gather(*(app.health.tick() for _ in range(5)))  # loop and sweep at once
        assert _alerts(phone) == ["Health degraded"]
        assert await _types(app) == ["health_degraded"]
