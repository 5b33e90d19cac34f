"""One writer with group commit: callers queue items, one writer task commits what is queued
as one transaction, and each caller that waits learns its item's outcome only once the
transaction holding it is on disk (one fsync for the whole batch, however many it carries).

A batch gathers for up to `Batching.gather` seconds, or until it is full, or goes at once
when someone waits (`write`, `flush`). The commit function may fail one item alone (it
returns that item's exception; the rest of the batch is stored). When the whole batch fails,
its waiters are told; with `Batching.retry` its items stay queued (without waiters) and are
tried again after a backoff, without it they are given up. A writer that dies of a bug is
reported by the Supervisor and fails every waiter, never leaving one hanging.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from core.errors import StorageError
from core.runtime.backoff import Backoff, BackoffConfig
from core.runtime.tasks import Supervisor

log = logging.getLogger(__name__)

I = TypeVar("I")  # noqa: E741 (an item queued)
R = TypeVar("R")  # what its commit gives back

# Commits a batch as one transaction: each item's result, or the exception that failed that
# item alone. Raises sqlite3.Error or OSError when the whole batch failed.
Commit = Callable[[list[I]], Awaitable[Sequence[R | Exception]]]
FAILURES = (sqlite3.Error, OSError)


@dataclass(frozen=True, slots=True)
class Batching:
    """How a GroupCommit gathers its batches and what it does when one fails."""

    size: int = 512  # a batch this full goes at once
    most: int | None = None  # the most items one commit carries (None: all that are queued)
    gather: float = 0.0  # seconds a batch waits for more items while nobody waits on it
    retry: BackoffConfig | None = None  # a failed batch: tried again, or (None) given up
    max_pending: int | None = None  # items beyond this many queued are dropped and counted


@dataclass(slots=True)
class _Queued(Generic[I, R]):
    item: I
    future: asyncio.Future[R] | None  # None: nobody waits for this item


class GroupCommit(Generic[I, R]):
    """A write queue and its one writer task. `what` names the store in errors and logs."""

    def __init__(
        self,
        commit: Commit[I, R],
        *,
        what: str,
        name: str,
        tasks: Supervisor,
        batching: Batching = Batching(),
        after: Callable[[], Awaitable[None]] | None = None,
        private: bool = False,
    ) -> None:
        self._commit = commit
        self._after = after  # once a batch is committed, before its waiters are told
        self.what = what
        self._name = name
        self._private = private  # a commit's error may quote data never redacted
        self._supervisor = tasks
        self._batching = batching
        self._pending: list[_Queued[I, R]] = []
        self._enqueued = 0  # items ever queued
        self._settled = 0  # items ever committed (or, without retry, given up)
        self._flush_waiters: list[tuple[int, asyncio.Future[None]]] = []
        self._wakeup = asyncio.Event()
        self._urgent = False
        self._writer: asyncio.Task[None] | None = None
        self._closed = False
        self.last_error: str | None = None  # why commits are failing now; None when they work
        self.dropped = 0  # items refused: the writer had died or could not keep up
        self.commits = 0  # transactions committed
        self.writes = 0  # items they carried

    def start(self) -> None:
        """Start the writer task (supervised under `name`)."""
        self._closed = False
        self._writer = self._supervisor.spawn(
            self._write_forever(), name=self._name, private=self._private
        )
        self._writer.add_done_callback(self._writer_stopped)

    @property
    def started(self) -> bool:
        """Started and not stopped yet."""
        return self._writer is not None

    @property
    def queued(self) -> int:
        """Items waiting for their commit."""
        return len(self._pending)

    async def stop(self) -> None:
        """Commit what is queued (if the database lets it), then stop the writer; later
        writes are refused."""
        self._closed = True
        if self._writer is None:
            return
        with contextlib.suppress(StorageError):
            await self.flush()
        self._writer.cancel()
        await asyncio.wait([self._writer])  # a writer that died has been reported
        self._writer = None
        self._fail(self._pending, StorageError(f"{self.what}: not stored: closed"))
        self._pending = []

    def append(self, item: I) -> None:
        """Queue an item; it is committed within the gathering time."""
        self._enqueue(item, None)

    async def write(self, item: I) -> R:
        """Queue an item and return its result once it is committed; StorageError when it
        was not stored. A caller cancelled meanwhile does not take its item back."""
        future: asyncio.Future[R] = asyncio.get_running_loop().create_future()
        self._enqueue(item, future)
        return await future

    async def flush(self) -> None:
        """Wait until everything queued before this call is committed."""
        if self._settled >= self._enqueued:
            return
        if self._writer is None or self._writer.done():
            raise StorageError(f"{self.what}: not stored: the writer is not running")
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._flush_waiters.append((self._enqueued, future))
        self._urgent = True
        self._wakeup.set()
        await future

    def _enqueue(self, item: I, future: asyncio.Future[R] | None) -> None:
        if self._closed:
            raise StorageError(f"{self.what}: closed")
        if self._writer is None:
            raise StorageError(f"{self.what}: not open")
        limit = self._batching.max_pending
        if self._writer.done() or (limit is not None and len(self._pending) >= limit):
            reason = "the writer stopped" if self._writer.done() else "not keeping up"
            self.dropped += 1
            log.error("%s: %s; an item was dropped", self.what, reason)
            self._fail([_Queued(item, future)], StorageError(f"{self.what}: not stored: {reason}"))
            return
        self._pending.append(_Queued(item, future))
        self._enqueued += 1
        if future is not None or len(self._pending) >= self._batching.size:
            self._urgent = self._urgent or future is not None
            self._wakeup.set()
        elif len(self._pending) == 1:
            self._wakeup.set()

    async def _write_forever(self) -> None:
        retry = self._batching.retry
        backoff = Backoff(retry) if retry is not None else None
        while True:
            await self._wakeup.wait()
            await self._gather()
            self._wakeup.clear()
            self._urgent = False
            batch = self._pending[: self._batching.most]
            try:
                results = await self._commit([q.item for q in batch])
            except FAILURES as exc:
                self._failed(batch, exc)
                if backoff is not None:
                    await asyncio.sleep(next(backoff))
                    self._wakeup.set()
                continue
            if backoff is not None:
                backoff.reset()
            await self._committed(batch, results)
            if self._pending:
                self._wakeup.set()

    async def _gather(self) -> None:
        """Wait up to the gathering time for a full batch, unless someone waits already."""
        size, gather = self._batching.size, self._batching.gather
        if self._urgent or len(self._pending) >= size or gather <= 0:
            return
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(gather):
                while not self._urgent and len(self._pending) < size:
                    self._wakeup.clear()
                    await self._wakeup.wait()

    async def _committed(
        self, batch: list[_Queued[I, R]], results: Sequence[R | Exception]
    ) -> None:
        """The batch is on disk: run the after-commit step, then tell each waiter."""
        self.last_error = None
        self.commits += 1
        self.writes += len(batch)
        del self._pending[: len(batch)]
        try:
            if self._after is not None:
                await self._after()
        finally:  # stored even if the after-commit step failed: the waiters learn it
            self._settled += len(batch)
            self._settle_flush_waiters()
            for queued, result in zip(batch, results, strict=True):
                if isinstance(result, Exception):
                    self._fail([queued], StorageError(f"{self.what}: not stored: {result}"))
                elif queued.future is not None and not queued.future.done():
                    queued.future.set_result(result)

    def _failed(self, batch: list[_Queued[I, R]], exc: Exception) -> None:
        """Tell the batch's waiters; with retry, keep its items queued (without waiters)."""
        self.last_error = str(exc)
        log.error("%s: a commit failed (%d queued): %s", self.what, len(self._pending), exc)
        error = StorageError(f"{self.what}: not stored: {exc}")
        self._fail(batch, error)
        if self._batching.retry is None:
            del self._pending[: len(batch)]
            self._settled += len(batch)
            self._settle_flush_waiters()
        else:
            self._pending[: len(batch)] = [_Queued(q.item, None) for q in batch]
            self._settle_flush_waiters(error)

    def _writer_stopped(self, task: asyncio.Task[None]) -> None:
        """A writer that ended other than by stop() is a bug: say so, and let nobody wait."""
        if task.cancelled():
            return
        # The type only: the message may quote data that was never redacted.
        kind = type(task.exception()).__name__
        log.critical("%s: the writer stopped: %s", self.what, kind)
        self.last_error = f"the writer stopped ({kind})"
        error = StorageError(f"{self.what}: not stored: the writer stopped")
        self._fail(self._pending, error)
        self._settle_flush_waiters(error)

    def _settle_flush_waiters(self, error: Exception | None = None) -> None:
        waiting = []
        for target, future in self._flush_waiters:
            if future.done():
                continue
            if error is not None:
                future.set_exception(error)
            elif self._settled >= target:
                future.set_result(None)
            else:
                waiting.append((target, future))
        self._flush_waiters = waiting

    @staticmethod
    def _fail(batch: Sequence[_Queued[I, R]], error: StorageError) -> None:
        for queued in batch:
            if queued.future is not None and not queued.future.done():
                queued.future.set_exception(error)
                queued.future.exception()  # retrieved: the caller may have gone
