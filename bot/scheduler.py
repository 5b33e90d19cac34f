"""Wires the scheduler, the digest, health checks and health alerts into a Lancelot."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING

from core.clock import Clock, SystemWallClock, WallClock
from core.digest.service import DigestService
from core.health.alert_state import AlertStateStore
from core.health.alerts import HealthAlerts
from core.health.card import register_health_command
from core.health.checks import delivery_check, disk_check, scheduler_check
from core.health.snapshot import LOCAL_MODEL_CHECK
from core.scheduler import READY, Gates, Scheduler, SchedulerStore, load_jobs
from core.scheduler.builtins import Builtins
from core.scheduler.commands import JobCommands
from core.scheduler.skill_jobs import skill_job
from soul import Soul

if TYPE_CHECKING:
    from bot.app import Lancelot

log = logging.getLogger(__name__)


def _onboarding(app: Lancelot) -> str:
    """READY once the settings and the Soul are loaded (the settings are, if we got here)."""
    return READY if app.governance is not None else "SOUL_NOT_LOADED"


async def wire_scheduler(app: Lancelot, clock: Clock | None = None) -> Scheduler:
    """Build the scheduler and everything around it on `app`; it starts catching up and
    firing once the app is marked ready (channels attached). A clock with `time()` (tests)
    replaces the wall clock and turns the timer off: the test drives `run_pending()`.

    Raises ConfigError (one line, exit 2) for a broken scheduler.yaml.
    """
    conf = app.settings.scheduler
    specs = load_jobs(conf.jobs_file, timezone=conf.timezone, digest_time=conf.digest_time)
    controlled = isinstance(clock, WallClock)
    wall: WallClock = clock if isinstance(clock, WallClock) else SystemWallClock()

    async def local_model() -> bool | None:
        if not app.health.has_check(LOCAL_MODEL_CHECK):
            return None
        return LOCAL_MODEL_CHECK not in (await app.health.check()).failing

    def soul() -> Soul | None:
        return app.governance.keeper() if app.governance is not None else None

    gates = Gates(
        lambda: _onboarding(app),
        local_model,
        soul,
        enabled=lambda: app.features.enabled("SCHEDULER"),
    )
    store = SchedulerStore(app.home / "scheduler.db")
    scheduler = Scheduler(specs, store, app.ledger.append, gates, wall, timer=not controlled)
    await app.stack.enter_async_context(scheduler)
    app.scheduler = scheduler
    app.status_fields["Scheduler"] = lambda: "running" if scheduler.running else "not running"
    _register_jobs(app, scheduler, store, wall)
    await _watch_health(app, scheduler, wall)
    starter = asyncio.create_task(_start_when_ready(app, scheduler), name="scheduler-start")
    app.stack.push_async_callback(_cancel, starter)
    return scheduler


def _register_jobs(
    app: Lancelot, scheduler: Scheduler, store: SchedulerStore, wall: WallClock
) -> None:
    builtins = Builtins(app.health, app.tokens, app.viewer, app.outbox, store, app.state)
    digest = DigestService(
        app.bus,
        app.ledger,
        app.state,
        store,
        app.tokens,
        wall,
        viewer=app.viewer if app.web_port is not None else None,
        public_url=app.settings.public_url,
    )
    scheduler.register("builtin:health_sweep", builtins.health_sweep)
    scheduler.register("builtin:memory_cleanup", builtins.memory_cleanup)
    scheduler.register("builtin:credential_rotation", builtins.credential_rotation)
    scheduler.register("builtin:daily_digest", digest.scheduled)
    for spec in scheduler.specs.values():
        kind, _, name = spec.run.partition(":")
        if kind == "skill" and app.skill_runner is not None:
            runner = skill_job(app.skill_runner, name, spec.args)
            scheduler.register(f"job:{spec.name}", runner)
    digest.register(app.commands)
    JobCommands(scheduler, app.tokens, app.bus, app.ledger).register(app.commands)
    register_health_command(app.commands, app.health)


async def _watch_health(app: Lancelot, scheduler: Scheduler, wall: WallClock) -> None:
    conf = app.settings.scheduler
    health = app.health
    health.set_interval(conf.health_interval_seconds)
    health.onboarding_state = lambda: _onboarding(app)
    health.scheduler_status = lambda: (scheduler.running, scheduler.last_tick_at)
    health.register("disk", disk_check(app.home, conf.disk_min_free_mb))
    health.register("scheduler", scheduler_check(scheduler))
    health.register("delivery", delivery_check(app.state, wall.time))
    store = AlertStateStore(app.state)
    await store.setup()
    alerts = HealthAlerts(
        app.bus,
        app.ledger,
        app.tokens,
        wall,
        enabled=lambda: app.features.enabled("HEALTH"),
        store=store,  # a restart while degraded does not alert again
    )
    await alerts.restore()
    alerts.register(app.commands)
    health.listen(alerts.observe)
    app.alerts = alerts


async def _start_when_ready(app: Lancelot, scheduler: Scheduler) -> None:
    await app.health.wait_ready()
    try:
        await scheduler.start()
    except Exception as exc:  # the app keeps serving; health reports the scheduler down
        log.exception("scheduler: could not start")
        scheduler.start_error = type(exc).__name__


async def _cancel(task: asyncio.Task[None]) -> None:
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
