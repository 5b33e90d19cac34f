"""Quiet hours from the Soul's scheduling boundaries: a daily window (it may wrap midnight)
when non-urgent cards wait for its end."""

from __future__ import annotations

from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

from soul.schema import QuietHours


def quiet_until(quiet: QuietHours | None, now: float) -> float | None:
    """When the quiet window `now` falls in ends (epoch seconds), or None outside one."""
    if quiet is None:
        return None
    zone = ZoneInfo(quiet.timezone)
    local = datetime.fromtimestamp(now, zone)
    start, end = _clock(quiet.start), _clock(quiet.end)
    if start == end:
        return None  # an empty window
    today_end = datetime.combine(local.date(), end, zone)
    moment = local.time()
    if start < end:
        return today_end.timestamp() if start <= moment < end else None
    if moment >= start:  # the evening part of a window that ends tomorrow morning
        return datetime.combine(local.date() + timedelta(days=1), end, zone).timestamp()
    return today_end.timestamp() if moment < end else None


def _clock(text: str) -> time:
    hour, minute = text.split(":")
    return time(int(hour), int(minute))
