"""The one way to start a background task: kept, watched, and reported when it dies.

Modelled on python-telegram-bot's `Application.create_task` and its error callback. A task
started with `spawn` is referenced until it ends (asyncio keeps only weak references), an
exception that ends it is logged with its traceback, and a loop that died that way is named
by `died()` and `health()` until a task of the same name is started again. A loop that
survives an error by retrying says so (`failing`, then `recovered`), and `health()` names it
meanwhile. Cancellation is never an error and is never swallowed.
"""

from __future__ import annotations

import asyncio
import logging
import traceback
from collections.abc import Coroutine
from typing import Any, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")


class Supervisor:
    """Starts, keeps and watches background tasks; one for the app, or one per service."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()
        self._died: dict[str, str] = {}  # loop name -> the exception type that ended it
        self._failing: dict[str, str] = {}  # loop name -> why its last round failed

    def spawn(
        self,
        coro: Coroutine[Any, Any, T],
        *,
        name: str,
        report: bool = True,
        private: bool = False,
    ) -> asyncio.Task[T]:
        """Start `coro` as a task named `name` and watch it.

        report=False: a short task (one answer, one event) whose failure is logged but does
        not mark the app degraded. private=True: the exception's message may quote data that
        must not reach the log (unredacted receipts), so only its type and frames are logged.
        """
        task = asyncio.create_task(coro, name=name)
        self._tasks.add(task)
        self._died.pop(name, None)  # started again: no longer dead
        self._failing.pop(name, None)
        task.add_done_callback(lambda done: self._ended(done, report, private))
        return task

    def _ended(self, task: asyncio.Task[Any], report: bool, private: bool) -> None:
        self._tasks.discard(task)
        self._failing.pop(task.get_name(), None)  # ended: dead (below) or stopped, not failing
        if task.cancelled():
            return
        exc = task.exception()  # retrieved here: no "never retrieved" noise later
        if exc is None:
            return
        name = task.get_name()
        if private:
            frames = "".join(traceback.format_tb(exc.__traceback__))
            log.error("background task %s died: %s\n%s", name, type(exc).__name__, frames)
        else:
            log.error("background task %s died", name, exc_info=exc)
        if report:
            self._died[name] = type(exc).__name__

    def failing(self, name: str, why: str) -> None:
        """The loop `name` is still running but its last round failed (it retries): `health()`
        names it with `why` (one short line, nothing secret) until `recovered(name)`."""
        self._failing[name] = why

    def recovered(self, name: str) -> None:
        """The loop `name` got through a round again."""
        self._failing.pop(name, None)

    @property
    def running(self) -> int:
        """How many tasks are still running."""
        return len(self._tasks)

    def died(self) -> tuple[str, ...]:
        """The names of loops that ended with an exception (and were not started again)."""
        return tuple(self._died)

    async def health(self) -> str | None:
        """A health check (HealthMonitor.register): None, or which loops died or are failing."""
        parts = []
        if self._died:
            dead = ", ".join(f"{name} ({kind})" for name, kind in self._died.items())
            parts.append(f"background task{'s' if len(self._died) > 1 else ''} stopped: {dead}")
        if self._failing:
            failing = ", ".join(f"{name} ({why})" for name, why in self._failing.items())
            parts.append(f"retrying after an error: {failing}")
        return "; ".join(parts) or None

    async def aclose(self) -> None:
        """Cancel the tasks still running and wait until they have ended."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)
