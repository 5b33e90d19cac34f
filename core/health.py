"""Readiness: named checks rolled up into a HealthSnapshot for /health/ready and /health."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

log = logging.getLogger(__name__)

# A check returns None when healthy, or a short reason (safe to show) when degraded.
HealthCheck = Callable[[], Awaitable[str | None]]


def _iso(ts: float | None) -> str | None:
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="seconds") if ts else None


@dataclass(frozen=True, slots=True)
class HealthSnapshot:
    """What /health/ready reports. Reasons are short and never carry internals."""

    ready: bool
    degraded_reasons: tuple[str, ...]
    started_at: float
    last_health_tick_at: float | None
    timestamp: float = field(default_factory=time.time)
    details: tuple[tuple[str, str], ...] = ()

    def as_json(self) -> dict[str, object]:
        """The JSON body for /health/ready."""
        return {
            "ready": self.ready,
            "degraded_reasons": list(self.degraded_reasons),
            "started_at": _iso(self.started_at),
            "last_health_tick_at": _iso(self.last_health_tick_at),
            "timestamp": _iso(self.timestamp),
            **dict(self.details),
        }


class HealthMonitor:
    """Runs registered checks on demand and on an interval; remembers the last snapshot."""

    def __init__(self, interval: float = 30.0) -> None:
        self._checks: dict[str, HealthCheck] = {}
        self._interval = interval
        self._started_at = time.time()
        self._ready = False
        self._last: HealthSnapshot | None = None
        self._task: asyncio.Task[None] | None = None

    def register(self, name: str, check: HealthCheck) -> None:
        """Add a named check."""
        self._checks[name] = check

    def mark_ready(self) -> None:
        """Startup finished: everything that should run is running."""
        self._ready = True

    async def check(self) -> HealthSnapshot:
        """Run every check now."""
        reasons: list[str] = []
        if not self._ready:
            reasons.append("starting up")
        for name, check in self._checks.items():
            try:
                reason = await check()
            except Exception:
                log.exception("health check %s crashed", name)
                reason = f"{name}: check failed"
            if reason:
                reasons.append(reason)
        self._last = HealthSnapshot(
            ready=not reasons,
            degraded_reasons=tuple(reasons),
            started_at=self._started_at,
            last_health_tick_at=time.time(),
        )
        return self._last

    async def snapshot(self) -> HealthSnapshot:
        """A fresh snapshot (checks are cheap; /health/ready always tells the truth now)."""
        return await self.check()

    async def __aenter__(self) -> HealthMonitor:
        self._task = asyncio.create_task(self._tick_forever(), name="health-monitor")
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _tick_forever(self) -> None:
        while True:
            await asyncio.sleep(self._interval)
            snapshot = await self.check()
            if snapshot.degraded_reasons:
                log.warning("health degraded: %s", "; ".join(snapshot.degraded_reasons))
