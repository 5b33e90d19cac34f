"""The one way to start a background task: kept, watched, and reported when it dies.

Modelled on python-telegram-bot's `Application.create_task` and its error callback. A task
started with `spawn` is referenced until it ends (asyncio keeps only weak references), an
exception that ends it is logged with its traceback, and a loop that died that way is named
by `died()` and `health()` until a task of the same name is started again. Cancellation is
never an error and is never swallowed.
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
        task.add_done_callback(lambda done: self._ended(done, report, private))
        return task

    def _ended(self, task: asyncio.Task[Any], report: bool, private: bool) -> None:
        self._tasks.discard(task)
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

    @property
    def running(self) -> int:
        """How many tasks are still running."""
        return len(self._tasks)

    def died(self) -> tuple[str, ...]:
        """The names of loops that ended with an exception (and were not started again)."""
        return tuple(self._died)

    async def health(self) -> str | None:
        """A health check (HealthMonitor.register): None, or which loops died."""
        if not self._died:
            return None
        dead = ", ".join(f"{name} ({kind})" for name, kind in self._died.items())
        return f"background task{'s' if len(self._died) > 1 else ''} stopped: {dead}"

    async def aclose(self) -> None:
        """Cancel the tasks still running and wait until they have ended."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)
