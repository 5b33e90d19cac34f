"""Readiness: named checks rolled up into a HealthSnapshot for /health/ready and /health."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from core.runtime.tasks import Supervisor

log = logging.getLogger(__name__)

# A check returns None when healthy, or a short reason (safe to show) when degraded.
HealthCheck = Callable[[], Awaitable[str | None]]
# Told about every snapshot the monitor loop takes (health alerts watch transitions).
HealthListener = Callable[["HealthSnapshot"], Awaitable[None]]
LOCAL_MODEL_CHECK = "local_model"
# How long /status may show the last snapshot instead of running every check again (a burst of
# /status would otherwise ping Docker and query state.db once per message).
RECENT_FOR = 2.0


def _iso(ts: float | None) -> str | None:
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="seconds") if ts else None


@dataclass(frozen=True, slots=True)
class HealthSnapshot:
    """What /health/ready reports. Reasons are short and never carry internals. `ready`:
    startup finished and every check that is not optional passes."""

    ready: bool
    degraded_reasons: tuple[str, ...]
    started_at: float
    last_health_tick_at: float | None
    timestamp: float = field(default_factory=time.time)
    details: tuple[tuple[str, str], ...] = ()
    onboarding_state: str = "unknown"
    local_llm_ready: bool | None = None  # None: no local model check is registered
    scheduler_running: bool = False
    last_scheduler_tick_at: float | None = None
    failing: tuple[str, ...] = ()  # names of the checks that failed (not shown)
    passing: tuple[str, ...] = ()  # names of the checks that passed (/health names them)

    @property
    def degraded(self) -> bool:
        """Something is wrong, ready or not (an optional part missing leaves it ready)."""
        return bool(self.degraded_reasons)

    def as_json(self) -> dict[str, object]:
        """The JSON body for /health/ready."""
        return {
            "ready": self.ready,
            "degraded": self.degraded,
            "onboarding_state": self.onboarding_state,
            "local_llm_ready": self.local_llm_ready,
            "scheduler_running": self.scheduler_running,
            "last_scheduler_tick_at": _iso(self.last_scheduler_tick_at),
            "degraded_reasons": list(self.degraded_reasons),
            "started_at": _iso(self.started_at),
            "last_health_tick_at": _iso(self.last_health_tick_at),
            "timestamp": _iso(self.timestamp),
            **dict(self.details),
        }


class HealthMonitor:
    """Runs registered checks on demand and on an interval; remembers the last snapshot."""

    def __init__(
        self,
        interval: float = 30.0,
        *,
        tasks: Supervisor | None = None,
        recent_for: float = RECENT_FOR,
    ) -> None:
        self._recent_for = recent_for
        self._supervisor = tasks or Supervisor()
        self._checks: dict[str, HealthCheck] = {}
        self._optional: set[str] = set()
        self._interval = interval
        self._started_at = time.time()
        self._ready = False
        self._last: HealthSnapshot | None = None
        self._last_at = 0.0  # time.monotonic() when _last's checks started
        self._changes = 0  # checks registered or readiness changed: a cached snapshot is stale
        self._last_changes = -1
        self._running: asyncio.Future[HealthSnapshot] | None = None
        self._task: asyncio.Task[None] | None = None
        self._listeners: list[HealthListener] = []
        self._last_tick_at: float | None = None
        self._ready_event = asyncio.Event()
        self.onboarding_state: Callable[[], str] = lambda: "unknown"
        self.scheduler_status: Callable[[], tuple[bool, float | None]] = lambda: (False, None)

    def register(self, name: str, check: HealthCheck, *, optional: bool = False) -> None:
        """Add a named check. An `optional` part (the sandbox, a model) that fails degrades
        Lancelot but leaves it ready: readiness means "can serve the owner"."""
        self._checks[name] = check
        self._changes += 1
        if optional:
            self._optional.add(name)

    def has_check(self, name: str) -> bool:
        """Whether a check of that name is registered."""
        return name in self._checks

    def listen(self, listener: HealthListener) -> None:
        """Be told every snapshot the monitor loop (or `tick()`) takes."""
        self._listeners.append(listener)

    def set_interval(self, seconds: float) -> None:
        """How often the monitor loop runs the checks."""
        self._interval = seconds

    def mark_ready(self) -> None:
        """Startup finished: everything that should run is running."""
        self._ready = True
        self._changes += 1
        self._ready_event.set()

    async def wait_ready(self) -> None:
        """Return once startup has finished."""
        await self._ready_event.wait()

    async def check(self) -> HealthSnapshot:
        """Run every check now."""
        return await self._check_all()

    def _check_done(self, done: asyncio.Future[HealthSnapshot]) -> None:
        self._running = None
        if not done.cancelled():
            done.exception()  # retrieved: each caller gets it from its own await

    async def recent(self) -> HealthSnapshot:
        """The last snapshot if its checks ran within `recent_for` seconds and no check was
        registered and readiness did not change since; otherwise a fresh one."""
        fresh = time.monotonic() - self._last_at <= self._recent_for
        if self._last is not None and fresh and self._last_changes == self._changes:
            return self._last
        if self._running is None:  # callers at the same moment share one run
            self._running = asyncio.ensure_future(self._check_all())
            self._running.add_done_callback(self._check_done)
        return await asyncio.shield(self._running)

    async def _check_all(self) -> HealthSnapshot:
        started, changes = time.monotonic(), self._changes
        reasons: list[str] = []
        failing: list[str] = []
        if not self._ready:
            reasons.append("starting up")
        for name, check in list(self._checks.items()):
            try:
                reason = await check()
            except Exception:
                log.exception("health check %s crashed", name)
                reason = f"{name}: check failed"
            if reason:
                reasons.append(reason)
                failing.append(name)
        running, scheduler_tick = self.scheduler_status()
        local = LOCAL_MODEL_CHECK
        self._last = HealthSnapshot(
            ready=self._ready and all(name in self._optional for name in failing),
            degraded_reasons=tuple(reasons),
            started_at=self._started_at,
            last_health_tick_at=self._last_tick_at,
            onboarding_state=self.onboarding_state(),
            local_llm_ready=(local not in failing) if local in self._checks else None,
            scheduler_running=running,
            last_scheduler_tick_at=scheduler_tick,
            failing=tuple(failing),
            passing=tuple(name for name in self._checks if name not in failing),
        )
        self._last_at, self._last_changes = started, changes
        return self._last

    async def tick(self) -> HealthSnapshot:
        """One round of the monitor loop: check everything and tell the listeners."""
        self._last_tick_at = time.time()
        snapshot = await self.check()
        for listener in self._listeners:
            try:
                await listener(snapshot)
            except Exception:
                log.exception("a health listener failed")
        return snapshot

    async def snapshot(self) -> HealthSnapshot:
        """A fresh snapshot (checks are cheap; /health/ready always tells the truth now)."""
        return await self.check()

    async def __aenter__(self) -> HealthMonitor:
        self._task = self._supervisor.spawn(self._tick_forever(), name="health-monitor")
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _tick_forever(self) -> None:
        while True:
            await asyncio.sleep(self._interval)
            snapshot = await self.tick()
            if snapshot.degraded_reasons:
                log.warning("health degraded: %s", "; ".join(snapshot.degraded_reasons))
