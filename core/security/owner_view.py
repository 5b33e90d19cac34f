"""The owner as every card addresses them: by the name they gave, in their own timezone."""

from __future__ import annotations

import time
from collections.abc import Callable
from zoneinfo import ZoneInfo

from core.clock import parse_iso, spoken_time, time_left

Chosen = Callable[[], str | None]


def _nothing() -> str | None:
    return None


class OwnerView:
    """Who the cards speak to. The zone is the one chosen in onboarding, else `default_zone`
    (the settings' or this machine's); the name is the one given in onboarding, else none
    (cards then show the sender id, as before). Onboarding is wired after the cards' owners
    are built, so it attaches its answers with `follow`, read at every use."""

    def __init__(self, default_zone: str, now: Callable[[], float] = time.time) -> None:
        self._default = ZoneInfo(default_zone)
        self._now = now
        self._chosen_zone: Chosen = _nothing
        self._chosen_name: Chosen = _nothing

    def follow(self, *, zone: Chosen, name: Chosen) -> None:
        """Read the owner's answers (onboarding's) from now on."""
        self._chosen_zone = zone
        self._chosen_name = name

    @property
    def zone(self) -> ZoneInfo:
        """The owner's timezone now."""
        chosen = self._chosen_zone()
        return ZoneInfo(chosen) if chosen else self._default

    @property
    def name(self) -> str | None:
        """The name the owner asked to be called, if they gave one."""
        return self._chosen_name() or None

    def when(self, ts: float, now: float | None = None) -> str:
        """A moment in the owner's time: "14:05", "yesterday 18:04", "Mon 30 Nov 14:05"
        (`now`: the caller's clock, else the wall clock)."""
        return spoken_time(ts, self.zone, self._now() if now is None else now)

    def when_stamp(self, stamp: str, now: float | None = None) -> str:
        """A ledger or checkpoint time (ISO 8601, UTC) in the owner's time; kept as it is
        when it is no such time."""
        ts = parse_iso(stamp)
        return stamp if ts is None else self.when(ts, now)

    def until(self, ts: float, now: float | None = None) -> str:
        """A deadline with how far off it is: "tomorrow 20:04 (in 24 h)"."""
        now = self._now() if now is None else now
        return f"{spoken_time(ts, self.zone, now)} ({time_left(ts, now)})"

    def who(self, sender_id: str) -> str:
        """A decider as the owner knows them: their own name for their own id (only owners
        pass the owner check on a press), the id when no name was given."""
        return self.name or sender_id
