"""Time as a dependency (delivery pacing and backoff read and wait on a Clock, so tests can
replace minutes of waiting with virtual time), and time as the owner reads it."""

from __future__ import annotations

import asyncio
import os
import time
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import Protocol, runtime_checkable
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError


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


def parse_iso(stamp: str) -> float | None:
    """An ISO 8601 time ("2026-01-02T03:04:05.123456Z", or with an offset) as epoch seconds;
    None for anything else. A time without an offset is UTC, as the ledger writes it."""
    try:
        when = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()


def machine_zone() -> str:
    """This machine's IANA zone: `TZ` when it names one, else where /etc/localtime points,
    else UTC (a container without either)."""
    named = os.environ.get("TZ", "").removeprefix(":")
    if named and _known(named):
        return named
    try:
        target = str(Path("/etc/localtime").resolve())
    except OSError:
        return "UTC"
    _, found, name = target.partition("zoneinfo/")
    return name if found and _known(name) else "UTC"


def _known(name: str) -> bool:
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return False
    return True


def spoken_time(ts: float, zone: tzinfo, now: float) -> str:
    """A time as the owner reads it, in their zone: "14:05" today, "yesterday 18:04",
    "tomorrow 09:00", "Mon 30 Nov 14:05" this year, "2 Jan 2027 14:05" another year."""
    when = datetime.fromtimestamp(ts, zone)
    today = datetime.fromtimestamp(now, zone).date()
    clock = when.strftime("%H:%M")
    days = (when.date() - today).days
    if days in _NEAR_DAYS:
        return f"{_NEAR_DAYS[days]}{clock}"
    if when.year == today.year:
        return f"{when:%a} {when.day} {when:%b} {clock}"
    return f"{when.day} {when:%b %Y} {clock}"


_NEAR_DAYS = {0: "", -1: "yesterday ", 1: "tomorrow "}


def time_left(ts: float, now: float) -> str:
    """How far a moment is from now, in words: "in 25 min", "in 3 h 10 min", "in 2 days",
    "5 min ago", "just now"."""
    seconds = ts - now
    span = _span(abs(seconds))
    if span is None:
        return "just now"
    return f"in {span}" if seconds > 0 else f"{span} ago"


def _span(seconds: float) -> str | None:
    """A duration, rounded, in the largest units that read well (None: under a minute)."""
    minutes = round(seconds / 60)
    if minutes < 1:
        return None
    if minutes < 60:
        return f"{minutes} min"
    if minutes < 180:
        hours, rest = divmod(minutes, 60)
        return f"{hours} h {rest} min" if rest else f"{hours} h"
    hours = round(minutes / 60)
    if hours < 24:
        return f"{hours} h"
    days = round(hours / 24)
    return f"{days} day{'s' if days != 1 else ''}"
