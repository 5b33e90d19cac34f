"""Lancelot's heartbeat: LANCELOT_HOME/heartbeat.json, rewritten every few seconds by the
serving process, read by the watchdog (`lancelot watchdog`), a separate process.

A file, not a question to the web app: it survives a kill -9 honestly (the beats stop), it
needs no port shared between containers, and it is written from the event loop, so a loop
that is wedged stops beating as surely as a dead process. Each beat carries a counter, so
the reader tells a new beat from the old one without trusting either clock.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from enum import StrEnum
from pathlib import Path
from typing import Self

from core.runtime.tasks import Supervisor

log = logging.getLogger(__name__)

FILE = "heartbeat.json"
TASK = "heartbeat"


class BeatState(StrEnum):
    """What the process said about itself in its last beat."""

    RUNNING = "running"
    STOPPING = "stopping"  # the last beat of a clean shutdown


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """One beat: who wrote it, since when it runs, when (epoch seconds), which beat it is."""

    pid: int
    started: float
    at: float
    count: int
    every: float  # seconds between beats
    state: BeatState = BeatState.RUNNING

    def as_json(self) -> str:
        """The file's text."""
        return json.dumps(asdict(self), sort_keys=True)


def read_heartbeat(home: Path) -> Heartbeat | None:
    """The last beat in `home`, or None when there is none or it is not one (a file someone
    else wrote is no beat: it never counts as Lancelot being alive)."""
    try:
        raw = json.loads((home / FILE).read_text(encoding="utf-8"))
        return Heartbeat(
            pid=_whole(raw["pid"]),
            started=_real(raw["started"]),
            at=_real(raw["at"]),
            count=_whole(raw["count"]),
            every=_real(raw["every"]),
            state=BeatState(raw["state"]),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _whole(value: object) -> int:
    """An int from JSON (a boolean or a string is refused)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"not a whole number: {value!r}")
    return value


def _real(value: object) -> float:
    """A float from JSON (a boolean or a string is refused)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"not a number: {value!r}")
    return float(value)


def write_heartbeat(home: Path, beat: Heartbeat) -> None:
    """Replace the file in one rename (a reader sees the old beat or the new one). No fsync:
    a beat lost with the machine is a beat that did not happen, which is the truth."""
    fd, temporary = tempfile.mkstemp(prefix=f".{FILE}.", suffix=".tmp", dir=home)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as stream:
            stream.write(beat.as_json())
        os.replace(temporary, home / FILE)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise


class HeartbeatWriter:
    """Beats every `every` seconds while open; a last beat saying "stopping" on a clean exit.
    A write that fails (disk full, permissions) is logged, shown by health, and tried again
    at the next beat."""

    def __init__(
        self,
        home: Path,
        every: float,
        tasks: Supervisor,
        *,
        now: Callable[[], float] = time.time,
    ) -> None:
        self._home = home
        self._every = every
        self._tasks = tasks
        self._now = now
        self._started = now()
        self._count = 0
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Self:
        self._task = self._tasks.spawn(self._beat_forever(), name=TASK)
        await self.beat()  # after spawn, which clears what health said of an earlier loop
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self.beat(BeatState.STOPPING)

    async def beat(self, state: BeatState = BeatState.RUNNING) -> None:
        """Write the next beat (in a thread: the loop never waits on the disk)."""
        self._count += 1
        beat = Heartbeat(os.getpid(), self._started, self._now(), self._count, self._every, state)
        try:
            await asyncio.to_thread(write_heartbeat, self._home, beat)
        except OSError as exc:
            why = exc.strerror or type(exc).__name__
            log.warning("heartbeat not written to %s: %s", self._home / FILE, why)
            self._tasks.failing(TASK, f"cannot write {FILE}: {why}")
            return
        self._tasks.recovered(TASK)

    async def _beat_forever(self) -> None:
        while True:
            await asyncio.sleep(self._every)
            await self.beat()
