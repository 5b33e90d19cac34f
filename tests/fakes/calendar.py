"""A calendar clock the test sets: scheduled jobs and digests read it; waiting stays real."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime


class CalendarClock:
    """A Clock (real monotonic time and sleeps, so delivery retries behave) that is also a
    WallClock whose time() the test moves: hours of schedule pass in one call."""

    def __init__(self, start: datetime | float) -> None:
        self.now = start.timestamp() if isinstance(start, datetime) else start

    def time(self) -> float:
        return self.now

    def monotonic(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))

    def set(self, when: datetime) -> None:
        """Jump to `when` (forwards, as time goes)."""
        self.now = when.timestamp()

    def advance(self, seconds: float) -> None:
        self.now += seconds


def utc(*parts: int) -> datetime:
    """datetime(..., tzinfo=UTC)."""
    return datetime(*parts, tzinfo=UTC)  # type: ignore[misc]
