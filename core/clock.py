"""Time as a dependency: delivery pacing and backoff read and wait on a Clock, so tests can
replace minutes of waiting with virtual time."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from typing import Protocol, runtime_checkable


class Clock(Protocol):
    """A monotonic clock and a way to wait on it."""

    def monotonic(self) -> float:
        """Seconds from an arbitrary origin; never goes backwards."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Wait `seconds` of this clock's time."""
        ...


class SystemClock:
    """The real clock: time.monotonic and asyncio.sleep."""

    def monotonic(self) -> float:
        """time.monotonic()."""
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        """asyncio.sleep(seconds)."""
        await asyncio.sleep(max(0.0, seconds))


@runtime_checkable
class WallClock(Protocol):
    """Calendar time (seconds since the epoch): cron schedules and digests read it."""

    def time(self) -> float:
        """time.time() or a controlled stand-in."""
        ...


class SystemWallClock:
    """The real calendar clock."""

    def time(self) -> float:
        """time.time()."""
        return time.time()


def iso(ts: float) -> str:
    """Epoch seconds as an ISO time in UTC."""
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="seconds")
