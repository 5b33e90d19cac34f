"""Group commit for the receipt ledger: receipts wait in a queue, one writer task commits
them in batches (one transaction each), and whoever needs durability waits for its batch.

A batch gathers for up to the flush interval, or until it is full, or at once when someone
waits (`append_durable`, `flush`). A failed write is logged, its waiters are told, and the
batch is tried again after a backoff; a writer that dies is reported by the Supervisor and
fails every waiter, never leaving one hanging.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
from collections.abc import Awaitable, Callable

from core.errors import StorageError
from core.receipts.chain import Row
from core.receipts.model import Receipt, StoredReceipt
from core.runtime.backoff import Backoff, BackoffConfig
from core.runtime.tasks import Supervisor

log = logging.getLogger(__name__)

MAX_PENDING = 200_000
WRITE_RETRY = BackoffConfig(min_delay=0.05, max_delay=5.0)  # after a failed write

# Commit receipts: (the rows added, the row standing for each receipt given).
Write = Callable[[list[Receipt]], Awaitable[tuple[list[Row], list[Row]]]]
# After a commit, with the rows it added (index them, note the head for a checkpoint).
Committed = Callable[[list[Row]], Awaitable[None]]


class GroupCommit:
    """The ledger's write queue and its one writer task."""

    def __init__(
        self,
        write: Write,
        committed: Committed,
        *,
        batch_size: int,
        flush_interval: float,
        tasks: Supervisor,
    ) -> None:
        self._write = write
        self._committed_hook = committed
        self._batch_size = batch_size
        self._flush_interval = flush_interval
        self._supervisor = tasks
        self._pending: list[tuple[Receipt, asyncio.Future[StoredReceipt] | None]] = []
        self._enqueued = 0  # receipts ever queued
        self._committed = 0  # receipts ever committed (or given up on)
        self._flush_waiters: list[tuple[int, asyncio.Future[None]]] = []
        self._wakeup = asyncio.Event()
        self._urgent = False
        self._writer: asyncio.Task[None] | None = None
        self.last_error: str | None = None  # why writes are failing now; None when they work
        self.dropped = 0

    def start(self) -> None:
        """Start the writer (supervised as `ledger-writer`)."""
        # private: a writer's error may quote receipt data that was never redacted.
        self._writer = self._supervisor.spawn(
            self._write_forever(), name="ledger-writer", private=True
        )
        self._writer.add_done_callback(self._writer_stopped)

    @property
    def queued(self) -> int:
        """Receipts waiting for their commit."""
        return len(self._pending)

    @property
    def started(self) -> bool:
        """Started and not stopped yet."""
        return self._writer is not None

    async def stop(self) -> None:
        """Commit what is queued (if the database lets it), then stop the writer."""
        if self._writer is None:
            return
        with contextlib.suppress(StorageError):
            await self.flush()
        self._writer.cancel()
        await asyncio.wait([self._writer])  # a writer that died has been reported
        self._writer = None

    def _writer_stopped(self, task: asyncio.Task[None]) -> None:
        """A writer that ended other than by stop() is a bug: say so, and let nobody wait."""
        if task.cancelled():
            return
        # The type only: the message may quote receipt data that was never redacted.
        kind = type(task.exception()).__name__
        log.critical("receipt ledger writer stopped: %s", kind)
        self.last_error = f"the ledger writer stopped ({kind})"
        error = StorageError("receipts not stored: the ledger writer stopped")
        for _, future in self._pending:
            if future is not None and not future.done():
                future.set_exception(error)
        self._settle_flush_waiters(error)

    def append(self, receipt: Receipt) -> None:
        """Queue a receipt; it is committed within the flush interval."""
        self._enqueue(receipt, None)

    async def append_durable(self, receipt: Receipt) -> StoredReceipt:
        """Queue a receipt and wait until it is committed."""
        future: asyncio.Future[StoredReceipt] = asyncio.get_running_loop().create_future()
        self._enqueue(receipt, future)
        return await future

    async def flush(self) -> None:
        """Wait until everything queued before this call is committed."""
        if self._committed >= self._enqueued:
            return
        if self._writer is None or self._writer.done():
            raise StorageError("receipts not stored: the ledger writer is not running")
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._flush_waiters.append((self._enqueued, future))
        self._urgent = True
        self._wakeup.set()
        await future

    def _settle_flush_waiters(self, error: Exception | None = None) -> None:
        waiting = []
        for target, future in self._flush_waiters:
            if future.done():
                continue
            if error is not None:
                future.set_exception(error)
            elif self._committed >= target:
                future.set_result(None)
            else:
                waiting.append((target, future))
        self._flush_waiters = waiting

    def _enqueue(self, receipt: Receipt, future: asyncio.Future[StoredReceipt] | None) -> None:
        if self._writer is None:
            raise StorageError("the receipt ledger is not open")
        if self._writer.done() or len(self._pending) >= MAX_PENDING:
            reason = "stopped" if self._writer.done() else "not keeping up"
            self.dropped += 1
            log.error("receipt ledger %s; dropped receipt %s", reason, receipt.action_type)
            if future is not None:
                future.set_exception(StorageError(f"the receipt ledger is {reason}"))
            return
        self._pending.append((receipt, future))
        self._enqueued += 1
        if future is not None or len(self._pending) >= self._batch_size:
            self._urgent = self._urgent or future is not None
            self._wakeup.set()
        elif len(self._pending) == 1:
            self._wakeup.set()

    async def _write_forever(self) -> None:
        backoff = Backoff(WRITE_RETRY)
        while True:
            await self._wakeup.wait()
            if not self._urgent and len(self._pending) < self._batch_size:
                # Gather a batch, unless someone is waiting on durability.
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(self._flush_interval):
                        while not self._urgent and len(self._pending) < self._batch_size:
                            self._wakeup.clear()
                            await self._wakeup.wait()
            self._wakeup.clear()
            self._urgent = False
            batch = self._pending[: self._batch_size * 8]
            try:
                added, stored = await self._write([r for r, _ in batch])
            except (sqlite3.Error, OSError) as exc:
                self._failed(batch, exc)
                await asyncio.sleep(next(backoff))
                self._wakeup.set()
                continue
            backoff.reset()
            self.last_error = None
            del self._pending[: len(batch)]
            await self._committed_hook(added)
            self._committed += len(batch)
            self._settle_flush_waiters()
            for (_, future), row in zip(batch, stored, strict=True):
                if future is not None and not future.done():
                    future.set_result(StoredReceipt(*row))
            if self._pending:
                self._wakeup.set()

    def _failed(
        self, batch: list[tuple[Receipt, asyncio.Future[StoredReceipt] | None]], exc: Exception
    ) -> None:
        """Tell the batch's waiters; keep its receipts queued (without waiters) to retry."""
        self.last_error = str(exc)
        log.error("receipt ledger write failed (%d queued): %s", len(self._pending), exc)
        for _, future in batch:
            if future is not None and not future.done():
                future.set_exception(StorageError(f"receipt not stored: {exc}"))
        self._settle_flush_waiters(StorageError(f"receipts not stored: {exc}"))
        self._pending[: len(batch)] = [(r, None) for r, _ in batch]
