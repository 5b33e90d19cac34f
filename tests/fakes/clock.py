"""Virtual time for delivery tests: every sleep jumps the clock forward at once.

A minute of backoff passes in milliseconds, and `at()` schedules what happens meanwhile
(the fake Telegram coming back after a 60-second outage). Sleeps of concurrent lanes add up
rather than overlap, so virtual time runs ahead when several lanes wait at once: a test that
measures time should use one chat.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable


class LeapingClock:
    """A Clock (core.clock) whose sleep() advances it instead of waiting."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start
        self.slept = 0.0
        self._alarms: list[tuple[float, Callable[[], None]]] = []

    def monotonic(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        step = max(0.0, seconds)
        self.now += step
        self.slept += step
        self._ring()
        await asyncio.sleep(0)

    def at(self, when: float, action: Callable[[], None]) -> None:
        """Run `action` once the clock reaches `when`."""
        self._alarms.append((when, action))
        self._ring()

    def _ring(self) -> None:
        due = [alarm for alarm in self._alarms if alarm[0] <= self.now]
        self._alarms = [alarm for alarm in self._alarms if alarm[0] > self.now]
        for _, action in sorted(due, key=lambda alarm: alarm[0]):
            action()
