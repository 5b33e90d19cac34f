"""SQLite receipt ledger: batched, hash-chained, append-only writes through aiosqlite."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Self

from core.errors import StorageError
from core.receipts.base import (
    Checkpoint,
    ReceiptPage,
    ReceiptQuery,
    StoryPage,
    VerifyReport,
)
from core.receipts.chain import HASH, ID, SEQ, Row
from core.receipts.checkpoints import Checkpointer
from core.receipts.model import Receipt, StoredReceipt
from core.receipts.reader import LedgerReader
from core.receipts.redaction import Redactor
from core.receipts.schema import COLUMNS
from core.receipts.search import SearchIndex
from core.receipts.verify import Fingerprint, verify_ledger
from core.receipts.writer import ChainWriter
from core.runtime.backoff import Backoff, BackoffConfig
from core.runtime.tasks import Supervisor

log = logging.getLogger(__name__)

MAX_PENDING = 200_000
WRITE_RETRY = BackoffConfig(min_delay=0.05, max_delay=5.0)  # after a failed write
Pending = tuple[Receipt, "asyncio.Future[StoredReceipt] | None"]


class SqliteLedger:
    """The ReceiptStore on SQLite.

    `append` queues a receipt; a writer task commits queued receipts in batches (one
    transaction each), redacting each and chaining its hash to the one before it.
    `append_durable` and `flush` wait for the commit. Reads go through a connection of
    their own (LedgerReader), search through a derived index (SearchIndex). With a
    Checkpointer, the head is signed every so often and at close (checkpoints.py).
    """

    def __init__(
        self,
        path: Path,
        *,
        search_path: Path | None = None,
        redactor: Redactor | None = None,
        batch_size: int = 512,
        flush_interval: float = 0.05,
        tasks: Supervisor | None = None,
        checkpoints: Checkpointer | None = None,
    ) -> None:
        self.path = path
        self._checkpoints = checkpoints
        self._batch_size = batch_size
        self._flush_interval = flush_interval
        self._chain = ChainWriter(path, redactor or Redactor())
        self._supervisor = tasks or Supervisor()
        self._pending: list[tuple[Receipt, asyncio.Future[StoredReceipt] | None]] = []
        self._enqueued = 0  # receipts ever queued
        self._committed = 0  # receipts ever committed (or given up on)
        self._flush_waiters: list[tuple[int, asyncio.Future[None]]] = []
        self._wakeup = asyncio.Event()
        self._urgent = False
        self._writer: asyncio.Task[None] | None = None
        self._catch_up: asyncio.Task[None] | None = None
        self._last_error: str | None = None
        self.dropped = 0
        search_file = search_path or path.with_name(path.stem + "-search.db")
        self._search = SearchIndex(search_file, tasks=self._supervisor)
        self._reader = LedgerReader(path, self._search)

    async def __aenter__(self) -> Self:
        await self.open()
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def open(self) -> None:
        """Open (or create) the database, check it, and start the writer."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            await self._chain.open()
            await self._reader.open()
        except (sqlite3.Error, OSError) as exc:
            await self._reader.close()
            await self._chain.close()
            raise StorageError(f"{self.path}: cannot open the receipt ledger: {exc}") from None
        try:
            await self._search.open()
        except (sqlite3.Error, OSError) as exc:
            await self._reader.close()
            await self._chain.close()
            raise StorageError(
                f"{self._search.path}: cannot open the search index: {exc}"
            ) from None
        head = await self._reader.head()
        if self._checkpoints is not None:
            try:
                await self._checkpoints.start(head, self._supervisor)
            except OSError as exc:
                await self._search.close()
                await self._reader.close()
                await self._chain.close()
                raise StorageError(f"{self.path}: cannot write a checkpoint: {exc}") from None
        # private: a writer's error may quote receipt data that was never redacted.
        self._writer = self._supervisor.spawn(
            self._write_forever(), name="ledger-writer", private=True
        )
        self._writer.add_done_callback(self._writer_stopped)
        self._catch_up = self._supervisor.spawn(self._index_missing(head[0]), name="ledger-reindex")

    async def _index_missing(self, head: int) -> None:
        """Feed the search index what it lacks up to `head` (after a crash, or a deleted index
        file); the writer indexes everything committed after `head` itself."""
        upto = await self._search.indexed_upto()
        while upto < head:
            sql = (
                f"SELECT {COLUMNS} FROM receipts WHERE seq > ? AND seq <= ?"
                " ORDER BY seq LIMIT 20000"
            )
            rows = await self._reader.rows(sql, (upto, head))
            if not rows:
                return
            self._search.submit(rows)
            upto = rows[-1][SEQ]
            await self._search.drain()

    async def close(self) -> None:
        """Commit what is queued, stop the writer and close the database."""
        if self._writer is not None:
            with contextlib.suppress(StorageError):
                await self.flush()
            self._writer.cancel()
            await asyncio.wait([self._writer])  # a writer that died has been reported
            self._writer = None
            if self._checkpoints is not None:
                await self._checkpoints.stop()  # the shutdown checkpoint
        if self._catch_up is not None:
            self._catch_up.cancel()
            with contextlib.suppress(asyncio.CancelledError, sqlite3.Error, StorageError):
                await self._catch_up
        await self._search.close()
        await self._reader.close()
        await self._chain.close()

    def _writer_stopped(self, task: asyncio.Task[None]) -> None:
        """A writer that ended other than by close() is a bug: say so, and let nobody wait."""
        if task.cancelled():
            return
        # The type only: the message may quote receipt data that was never redacted.
        kind = type(task.exception()).__name__
        log.critical("receipt ledger writer stopped: %s", kind)
        self._last_error = f"the ledger writer stopped ({kind})"
        error = StorageError("receipts not stored: the ledger writer stopped")
        for _, future in self._pending:
            if future is not None and not future.done():
                future.set_exception(error)
        self._settle_flush_waiters(error)

    @property
    def healthy(self) -> bool:
        """False while writes are failing."""
        return self._last_error is None

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
                added, stored = await self._write(batch)
            except (sqlite3.Error, OSError) as exc:
                self._last_error = str(exc)
                log.error("receipt ledger write failed (%d queued): %s", len(self._pending), exc)
                for _, future in batch:
                    if future is not None and not future.done():
                        future.set_exception(StorageError(f"receipt not stored: {exc}"))
                self._settle_flush_waiters(StorageError(f"receipts not stored: {exc}"))
                self._pending[: len(batch)] = [(r, None) for r, _ in batch]
                await asyncio.sleep(next(backoff))
                self._wakeup.set()
                continue
            backoff.reset()
            self._last_error = None
            del self._pending[: len(batch)]
            self._search.submit(added)
            if added and self._checkpoints is not None:
                self._checkpoints.note(added[-1][SEQ], added[-1][HASH])
            await self._chain.maybe_checkpoint()
            self._committed += len(batch)
            self._settle_flush_waiters()
            for (_, future), row in zip(batch, stored, strict=True):
                if future is not None and not future.done():
                    future.set_result(StoredReceipt(*row))
            if self._pending:
                self._wakeup.set()

    async def _write(self, batch: Sequence[Pending]) -> tuple[list[Row], list[Row]]:
        """Commit a batch: (the rows added, the row standing for each entry)."""
        receipts = [r for r, _ in batch]
        try:
            rows = await self._chain.insert(receipts)
            return rows, rows
        except sqlite3.IntegrityError:
            pass
        # Another writer took our next seq, or a receipt was appended twice: it is stored
        # once, and the repeat stands for the stored copy. Once more, after the file's head.
        stored = await self._reader.rows_by_ids([r.id for r in receipts])
        known = {row[ID]: row for row in stored}
        fresh: dict[str, Receipt] = {}
        for receipt in receipts:
            if receipt.id not in known:
                fresh.setdefault(receipt.id, receipt)
        if len(fresh) < len(receipts):
            log.warning("%d receipt(s) appended again; stored once", len(receipts) - len(fresh))
        rows = await self._chain.insert(list(fresh.values())) if fresh else []
        known.update((row[ID], row) for row in rows)
        return rows, [known[r.id] for r in receipts]

    async def get(self, receipt_id: str) -> StoredReceipt | None:
        """One receipt by id."""
        return await self._reader.get(receipt_id)

    async def children(self, receipt_id: str, limit: int = 100) -> list[StoredReceipt]:
        """Receipts whose parent is `receipt_id`, oldest first."""
        return await self._reader.children(receipt_id, limit)

    async def page(self, query: ReceiptQuery) -> ReceiptPage:
        """A newest-first page of committed receipts."""
        return await self._reader.page(query)

    async def stories(self, before_seq: int | None, limit: int) -> StoryPage:
        """A newest-first page of requests, each with the receipts of its quest."""
        return await self._reader.stories(before_seq, limit)

    async def count_matching(self, text: str, cap: int) -> int:
        """How many receipts contain the words of `text` (up to `cap` + 1)."""
        return await self._reader.count_matching(text, cap)

    async def count(self) -> int:
        """How many receipts are committed."""
        return await self._reader.count()

    async def action_types(self) -> list[str]:
        """Distinct action types."""
        return await self._reader.action_types()

    async def verify(self, against: Fingerprint | None = None) -> VerifyReport:
        """Walk the chain and check it against every checkpoint (and `against`); report the
        first receipt altered, removed or reordered, a rewrite, or a cut tail. Hashing every
        row is CPU work: it runs in a thread, on a read-only connection of its own."""
        cp = self._checkpoints
        log, verifier = (cp.log, cp.verifier) if cp is not None else (None, None)
        return await asyncio.to_thread(verify_ledger, self.path, log, verifier, against)

    async def checkpoint(self) -> Checkpoint | None:
        """Commit what is queued and sign a checkpoint at the head (the latest, if it is
        there already); None without a Checkpointer or before the first receipt."""
        if self._checkpoints is None:
            return None
        await self.flush()
        return await self._checkpoints.now()

    @property
    def latest_checkpoint(self) -> Checkpoint | None:
        """The newest checkpoint written (or found at open)."""
        return self._checkpoints.latest if self._checkpoints is not None else None

    async def flush_search(self) -> None:
        """Wait until committed receipts are searchable (tests, benchmarks)."""
        await self.flush()
        if self._catch_up is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(self._catch_up)
        await self._search.drain()
