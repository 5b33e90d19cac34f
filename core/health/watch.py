"""The watchdog's judgement: is Lancelot alive, silent past the limit, or back?

Pure bookkeeping on what the caller observed and when (its own monotonic clock): no file,
no network, no sleeping, so every transition is tested exactly. Silence is the time since a
new running beat was last seen; a beat that says "stopping" (a clean shutdown) is no sign of
life. One outage gives one "down" notice, then one "back" notice when beats resume; a notice
stays due until the caller says it was delivered.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from core.health.heartbeat import BeatState, Heartbeat


class NoticeKind(StrEnum):
    """What the owner is told."""

    DOWN = "down"
    BACK = "back"


@dataclass(frozen=True, slots=True)
class Notice:
    """One message owed to the owner: `last` is the last running beat seen before the
    silence (None: none since the watchdog started), `final` the last beat read (it may
    say "stopping"), `silent` the seconds of silence, `back` the first beat after it."""

    kind: NoticeKind
    last: Heartbeat | None
    final: Heartbeat | None
    silent: float
    back: Heartbeat | None = None


class Watch:
    """Alive -> silent past `limit` seconds (down, told once) -> beating again (back)."""

    def __init__(self, limit: float, now: float) -> None:
        if limit <= 0:
            raise ValueError("the silence limit must be a positive number of seconds")
        self._limit = limit
        self._seen: Heartbeat | None = None  # the last beat read, whatever it said
        self._alive: Heartbeat | None = None  # the last running beat
        self._alive_at = now  # when a new running beat was last seen (or the watch began)
        self._down_since: float | None = None
        self._due: Notice | None = None

    @property
    def down(self) -> bool:
        """Lancelot has been silent past the limit and has not beaten since."""
        return self._down_since is not None

    @property
    def due(self) -> Notice | None:
        """The notice owed to the owner, if any."""
        return self._due

    def observe(self, beat: Heartbeat | None, now: float) -> Notice | None:
        """Take in what was read at `now` (None: no readable beat); returns the notice due."""
        before = self._seen
        if beat is not None:
            self._seen = beat
        if beat is not None and beat != before and beat.state is BeatState.RUNNING:
            self._beating(beat, before, now)
        elif self._down_since is None and now - self._alive_at >= self._limit:
            self._down_since = now
            self._due = Notice(NoticeKind.DOWN, self._alive, self._seen, now - self._alive_at)
        return self._due

    def _beating(self, beat: Heartbeat, before: Heartbeat | None, now: float) -> None:
        if self._down_since is not None:
            silent = now - self._alive_at
            self._due = Notice(NoticeKind.BACK, self._alive, before, silent, back=beat)
            self._down_since = None
        self._alive = beat
        self._alive_at = now

    def delivered(self, notice: Notice) -> None:
        """`notice` reached the owner: it is no longer due (a newer one stays due)."""
        if self._due == notice:
            self._due = None
