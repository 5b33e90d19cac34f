"""Wires the scheduler, the digest, health checks and health alerts into a Lancelot."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from bot.governance import GovernanceKit
from bot.kernel import Kernel
from core.clock import Clock, SystemWallClock, WallClock
from core.digest.service import DigestService
from core.governance.approvals import ApprovalStore
from core.health.alert_state import AlertStateStore
from core.health.alerts import HealthAlerts
from core.health.card import register_health_command
from core.health.checks import delivery_check, disk_check, scheduler_check
from core.health.snapshot import LOCAL_MODEL_CHECK
from core.llm.budget import Budget
from core.memory import Memory
from core.onboarding import Onboarding
from core.scheduler import READY, Gates, Scheduler, SchedulerStore, load_jobs
from core.scheduler.builtins import Builtins
from core.scheduler.chat_jobs import ChatJobs
from core.scheduler.commands import JobCommands
from core.scheduler.proposals import JobProposals
from core.scheduler.provider import CAPABILITIES, ProposalTool
from core.scheduler.skill_jobs import skill_job
from core.skills.runner import SkillRunner
from core.tools.capability import CapabilityTokens
from soul import Soul

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class SchedulerKit:
    """The scheduler and the health alerts wired around it."""

    scheduler: Scheduler
    alerts: HealthAlerts


def _gate(kit: GovernanceKit | None, onboarding: Onboarding | None) -> str:
    """READY once the settings and the Soul are loaded (the settings are, if we got here) and
    onboarding is not under way (not started, done or skipped); else what holds work back."""
    if kit is None:
        return "SOUL_NOT_LOADED"
    if onboarding is not None and not onboarding.progress.settled:
        return onboarding.label()
    return READY


def _state(kit: GovernanceKit | None, onboarding: Onboarding | None) -> str:
    """What /health shows: onboarding's own state (or why nothing can run)."""
    if kit is None:
        return "SOUL_NOT_LOADED"
    return onboarding.label() if onboarding is not None else READY


def _zone(onboarding: Onboarding | None, default: str | None) -> str | None:
    """The timezone the owner chose in chat, else the settings'."""
    chosen = onboarding.progress.timezone if onboarding is not None else None
    return chosen or default


async def wire_scheduler(
    app: Kernel,
    governance: GovernanceKit | None,
    skills: SkillRunner | None,
    clock: Clock | None = None,
    memory: Memory | None = None,
    onboarding: Onboarding | None = None,
    budget: Budget | None = None,
) -> SchedulerKit:
    """Build the scheduler, the digest, the health checks and alerts on the kernel; the
    scheduler starts catching up and firing once the app is marked ready (channels
    attached). A clock with `time()` (tests) replaces the wall clock and turns the timer
    off: the test drives `run_pending()`. Jobs that use the flagship pause while a spending
    `budget` is used up.

    Raises ConfigError (one line, exit 2) for a broken scheduler.yaml.
    """
    conf = app.settings.scheduler
    zone = _zone(onboarding, conf.timezone)
    specs = load_jobs(conf.jobs_file, timezone=zone, digest_time=conf.digest_time)
    controlled = isinstance(clock, WallClock)
    wall: WallClock = clock if isinstance(clock, WallClock) else SystemWallClock()

    async def local_model() -> bool | None:
        if not app.health.has_check(LOCAL_MODEL_CHECK):
            return None
        return LOCAL_MODEL_CHECK not in (await app.health.check()).failing

    def soul() -> Soul | None:
        return governance.keeper() if governance is not None else None

    gates = Gates(
        lambda: _gate(governance, onboarding),
        local_model,
        soul,
        enabled=lambda: app.features.enabled("SCHEDULER"),
        crusader=governance.policy.crusader_approves if governance is not None else _never,
        over_budget=partial(_over_budget, budget),
    )
    store = SchedulerStore(app.home / "scheduler.db")
    scheduler = Scheduler(
        specs, store, app.ledger.append, gates, wall, timer=not controlled, tasks=app.tasks
    )
    await app.stack.enter_async_context(scheduler)
    app.status_fields["Scheduler"] = lambda: "running" if scheduler.running else "not running"
    approvals = governance.approval_store if governance is not None else None
    chat = await _chat_jobs(app, scheduler, wall, soul, governance, onboarding)
    _register_jobs(app, scheduler, store, wall, skills, approvals, memory, chat)
    alerts = await _watch_health(app, scheduler, wall, governance, onboarding)
    starter = app.tasks.spawn(_start_when_ready(app, scheduler), name="scheduler-start")
    app.stack.push_async_callback(_cancel, starter)
    return SchedulerKit(scheduler, alerts)


def _never(tier: str) -> bool:
    return False


async def _over_budget(budget: Budget | None) -> str | None:
    """Why paid model calls are paused (a budget used up), or None."""
    status = await budget.reached() if budget is not None else None
    return status.reason() if status is not None else None


def _register_jobs(
    app: Kernel,
    scheduler: Scheduler,
    store: SchedulerStore,
    wall: WallClock,
    skills: SkillRunner | None,
    approvals: ApprovalStore | None,
    memory: Memory | None,
    chat: tuple[ChatJobs, JobProposals],
) -> None:
    builtins = Builtins(app.health, app.tokens, app.viewer, app.outbox, store, memory)
    digest = DigestService(
        app.bus,
        app.ledger,
        approvals,
        store,
        app.tokens,
        wall,
        app.owner,
        viewer=app.viewer if app.web_port is not None else None,
        public_url=app.settings.public_url,
    )
    scheduler.register("builtin:health_sweep", builtins.health_sweep)
    scheduler.register("builtin:memory_cleanup", builtins.memory_cleanup)
    scheduler.register("builtin:credential_rotation", builtins.credential_rotation)
    scheduler.register("builtin:daily_digest", digest.scheduled)
    for spec in scheduler.specs.values():
        kind, _, name = spec.run.partition(":")
        if kind == "skill" and skills is not None:
            runner = skill_job(skills, name, spec.args)
            scheduler.register(f"job:{spec.name}", runner)
    digest.register(app.commands)
    JobCommands(scheduler, app.tokens, app.bus, app.ledger, app.owner, *chat).register(app.commands)
    if scheduler.ask_approval is not None:  # a chat job's approval card waits out quiet hours
        scheduler.ask_approval = chat[0].quiet_asks(scheduler.ask_approval)
    register_health_command(app.commands, app.health, app.owner)


async def _chat_jobs(
    app: Kernel,
    scheduler: Scheduler,
    wall: WallClock,
    soul: Callable[[], Soul | None],
    governance: GovernanceKit | None,
    onboarding: Onboarding | None,
) -> tuple[ChatJobs, JobProposals]:
    """Jobs created from chat (kept ones scheduled again), /remind, and the agent's
    schedule.propose tool (governed, so only with the Soul loaded). Reminders and quiet
    hours follow the timezone the owner chose in chat as soon as it is chosen."""
    default = app.settings.owner_timezone

    def zone() -> str:
        return _zone(onboarding, None) or default

    def owner_soul() -> Soul | None:
        return _quiet_in(soul(), _zone(onboarding, None))

    chat = ChatJobs(scheduler, app.bus, app.ledger, wall, owner_soul)
    await chat.load()
    proposals = JobProposals(chat, app.tokens, app.bus, app.ledger, wall, zone)
    proposals.register(app.commands)
    if governance is not None:
        tool = ProposalTool(proposals, app.bus, CapabilityTokens(app.secret))
        governance.tools.register(tool, CAPABILITIES, local=True)
    return chat, proposals


def _quiet_in(soul: Soul | None, zone: str | None) -> Soul | None:
    """The Soul with its quiet hours read in the owner's chosen timezone."""
    if soul is None or zone is None:
        return soul
    bounds = soul.scheduling_boundaries
    quiet = bounds.quiet_hours
    if quiet is None or quiet.timezone == zone:
        return soul
    timed = bounds.model_copy(update={"quiet_hours": quiet.model_copy(update={"timezone": zone})})
    return soul.model_copy(update={"scheduling_boundaries": timed})


async def _watch_health(
    app: Kernel,
    scheduler: Scheduler,
    wall: WallClock,
    governance: GovernanceKit | None,
    onboarding: Onboarding | None,
) -> HealthAlerts:
    conf = app.settings.scheduler
    health = app.health
    health.set_interval(conf.health_interval_seconds)
    health.onboarding_state = lambda: _state(governance, onboarding)
    health.scheduler_status = lambda: (scheduler.running, scheduler.last_tick_at)
    health.register("disk", disk_check(app.home, conf.disk_min_free_mb))
    health.register("scheduler", scheduler_check(scheduler))
    health.register("delivery", delivery_check(app.outbox.store, wall.time))
    store = AlertStateStore(app.state)
    await store.setup()
    alerts = HealthAlerts(
        app.bus,
        app.ledger,
        app.tokens,
        wall,
        app.owner,
        enabled=lambda: app.features.enabled("HEALTH"),
        store=store,  # a restart while degraded does not alert again
    )
    await alerts.restore()
    alerts.register(app.commands)
    health.listen(alerts.observe)
    return alerts


async def _start_when_ready(app: Kernel, scheduler: Scheduler) -> None:
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
