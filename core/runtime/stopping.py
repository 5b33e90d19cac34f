"""Stopping a running task at a safe point: never in the middle of an effect.

A task that may be stopped runs its waits (a model call, a tool call) through its
`StopSwitch`. When the owner asks to stop, a wait that has not started changing anything is
cancelled at once and `Stopped` is raised in the task; a governed effect that has started
(`effect_underway()`, entered by the executor) is let finish first, with its receipts, and
the stop takes effect when it is done.

The switch travels in a context variable, so the executor deep below the agent learns that
its caller may be stopped without every layer in between passing it along.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")

_current: ContextVar[StopSwitch | None] = ContextVar("lancelot_stop_switch", default=None)


class Stopped(Exception):
    """Raised in a task at the first safe point after the owner asked it to stop."""


@dataclass(frozen=True, slots=True)
class StopRequest:
    """Who asked to stop, through which channel, and when (epoch and monotonic seconds)."""

    by: str
    via: str
    at: float
    monotonic: float


class Hold:
    """One effect under way: while any hold is open, a stop waits. Released once."""

    def __init__(self, switch: StopSwitch) -> None:
        self._switch = switch
        self._open = True

    def release(self) -> None:
        """The effect is over (idempotent)."""
        if self._open:
            self._open = False
            self._switch._released()

    def __enter__(self) -> Hold:
        return self

    def __exit__(self, *_: object) -> None:
        self.release()


class StopSwitch:
    """One task's stop: asked for once, effective when no effect is under way."""

    def __init__(self) -> None:
        self.request: StopRequest | None = None
        self._holds = 0
        self._effective = asyncio.Event()

    @property
    def requested(self) -> bool:
        """The owner asked to stop (it may still wait for an effect to finish)."""
        return self.request is not None

    @property
    def effective(self) -> bool:
        """Asked for, and no effect is under way: the task stops at its next wait."""
        return self._effective.is_set()

    def ask(self, by: str, via: str) -> bool:
        """Ask the task to stop; False when it was asked already."""
        if self.request is not None:
            return False
        self.request = StopRequest(by, via, time.time(), time.monotonic())
        self._update()
        return True

    def hold(self) -> Hold:
        """Mark an effect under way; the stop waits until the hold is released."""
        self._holds += 1
        return Hold(self)

    def _released(self) -> None:
        self._holds -= 1
        # Soon, not now: the task that held it finishes its step (and returns what the
        # effect did) before a waiting stop cancels anything.
        asyncio.get_running_loop().call_soon(self._update)

    def _update(self) -> None:
        if self.request is not None and self._holds == 0:
            self._effective.set()

    def check(self) -> None:
        """A safe point: raise Stopped if the stop is effective."""
        if self.effective:
            raise Stopped

    @contextlib.contextmanager
    def active(self) -> Iterator[StopSwitch]:
        """Make this the current task's switch (effect_underway() and stoppable() find it)."""
        token = _current.set(self)
        try:
            yield self
        finally:
            _current.reset(token)

    async def run(self, awaitable: Awaitable[T]) -> T:
        """Await `awaitable` unless the stop becomes effective first: then it is cancelled
        (it started no effect, or the stop would have waited) and Stopped is raised."""
        if self.effective:
            if asyncio.iscoroutine(awaitable):
                awaitable.close()
            raise Stopped
        task = asyncio.ensure_future(self._within(awaitable))
        stop = asyncio.ensure_future(self._effective.wait())
        try:
            await asyncio.wait((task, stop), return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            task.cancel()
            raise
        finally:
            stop.cancel()
        if task.done():
            return task.result()
        task.cancel()
        await asyncio.wait((task,))  # (a cancellation of this task still propagates)
        if not task.cancelled() and task.exception() is not None:
            log.debug("a stopped wait failed while cancelled", exc_info=task.exception())
        raise Stopped

    async def _within(self, awaitable: Awaitable[T]) -> T:
        with self.active():
            return await awaitable


def current() -> StopSwitch | None:
    """The switch of the task running now, if it can be stopped."""
    return _current.get()


@contextlib.contextmanager
def effect_underway() -> Iterator[None]:
    """Around an effect (an approved change being applied): a stop waits for it to end."""
    switch = _current.get()
    if switch is None:
        yield
        return
    with switch.hold():
        yield


async def stoppable(awaitable: Awaitable[T]) -> T:
    """Await `awaitable` through the current task's switch (plainly if it has none)."""
    switch = _current.get()
    if switch is None:
        return await awaitable
    return await switch.run(awaitable)
