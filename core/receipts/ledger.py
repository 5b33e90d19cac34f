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

import aiosqlite

from core.errors import StorageError
from core.receipts.base import ReceiptPage, ReceiptQuery, VerifyReport
from core.receipts.chain import HASH, SEQ, Row, chained_chunks
from core.receipts.model import GENESIS_HASH, Receipt, StoredReceipt
from core.receipts.reader import LedgerReader
from core.receipts.schema import COLUMNS, PRAGMAS, ROWS_PER_INSERT, SCHEMA, insert_rows
from core.receipts.search import SearchIndex
from core.security.redaction import Redactor

log = logging.getLogger(__name__)

MAX_PENDING = 200_000
CHECKPOINT_EVERY = 64  # batches between explicit WAL checkpoints
Pending = tuple[Receipt, "asyncio.Future[StoredReceipt] | None"]


async def _run(db: aiosqlite.Connection, sql: str, params: Sequence[object] = ()) -> int:
    """Execute a statement and close its cursor (an open cursor would hold back checkpoints)."""
    cursor = await db.execute(sql, params)
    count = cursor.rowcount
    await cursor.close()
    return count


class SqliteLedger:
    """The ReceiptStore on SQLite.

    `append` queues a receipt; a writer task commits queued receipts in batches (one
    transaction each), redacting each and chaining its hash to the one before it.
    `append_durable` and `flush` wait for the commit.

    This object is the file's only writer: it keeps the chain's head (last seq and hash) in
    memory. Were another writer to add rows, the next INSERT would hit an existing seq, fail,
    and the head would be read again before the retry.
    """

    def __init__(
        self,
        path: Path,
        *,
        search_path: Path | None = None,
        redactor: Redactor | None = None,
        batch_size: int = 512,
        flush_interval: float = 0.05,
    ) -> None:
        self.path = path
        self._redactor = redactor or Redactor()
        self._batch_size = batch_size
        self._flush_interval = flush_interval
        self._db: aiosqlite.Connection | None = None
        self._pending: list[tuple[Receipt, asyncio.Future[StoredReceipt] | None]] = []
        self._enqueued = 0  # receipts ever queued
        self._committed = 0  # receipts ever committed (or given up on)
        self._flush_waiters: list[tuple[int, asyncio.Future[None]]] = []
        self._wakeup = asyncio.Event()
        self._urgent = False
        self._writer: asyncio.Task[None] | None = None
        self._catch_up: asyncio.Task[None] | None = None
        self._last_error: str | None = None
        self._head: tuple[int, str] | None = None  # (seq, hash) of the last committed receipt
        self._batches = 0
        self.dropped = 0
        self._search = SearchIndex(search_path or path.with_name(path.stem + "-search.db"))
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
            # Implicit transactions: an INSERT begins one (IMMEDIATE), commit() ends it, so a
            # batch costs two trips to the database thread.
            self._db = await aiosqlite.connect(self.path, isolation_level="IMMEDIATE")
            for pragma in PRAGMAS:
                await _run(self._db, pragma)
            await self._db.executescript(SCHEMA)
            await self._reader.open()
        except (sqlite3.Error, OSError) as exc:
            await self._reader.close()
            if self._db is not None:
                await self._db.close()
                self._db = None
            raise StorageError(f"{self.path}: cannot open the receipt ledger: {exc}") from None
        try:
            await self._search.open()
        except (sqlite3.Error, OSError) as exc:
            await self._reader.close()
            await self._db.close()
            self._db = None
            raise StorageError(
                f"{self._search.path}: cannot open the search index: {exc}"
            ) from None
        head = await self._reader.count()
        self._writer = asyncio.create_task(self._write_forever(), name="ledger-writer")
        self._catch_up = asyncio.create_task(self._index_missing(head), name="ledger-reindex")

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
            with contextlib.suppress(asyncio.CancelledError):
                await self._writer
            self._writer = None
        if self._catch_up is not None:
            self._catch_up.cancel()
            with contextlib.suppress(asyncio.CancelledError, sqlite3.Error, StorageError):
                await self._catch_up
        await self._search.close()
        await self._reader.close()
        if self._db is not None:
            await self._db.close()
            self._db = None

    @property
    def healthy(self) -> bool:
        """False while writes are failing."""
        return self._last_error is None

    @property
    def last_error(self) -> str | None:
        """Why the last write failed, if it did."""
        return self._last_error

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
        if len(self._pending) >= MAX_PENDING:
            self.dropped += 1
            log.error("receipt ledger backlog full; dropped receipt %s", receipt.action_type)
            if future is not None:
                future.set_exception(StorageError("the receipt ledger is not keeping up"))
            return
        self._pending.append((receipt, future))
        self._enqueued += 1
        if future is not None or len(self._pending) >= self._batch_size:
            self._urgent = self._urgent or future is not None
            self._wakeup.set()
        elif len(self._pending) == 1:
            self._wakeup.set()

    async def _write_forever(self) -> None:
        backoff = 0.05
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
                stored = await self._write(batch)
            except (sqlite3.Error, OSError) as exc:
                self._last_error = str(exc)
                log.error("receipt ledger write failed (%d queued): %s", len(self._pending), exc)
                for _, future in batch:
                    if future is not None and not future.done():
                        future.set_exception(StorageError(f"receipt not stored: {exc}"))
                self._settle_flush_waiters(StorageError(f"receipts not stored: {exc}"))
                self._pending[: len(batch)] = [(r, None) for r, _ in batch]
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 5.0)
                self._wakeup.set()
                continue
            backoff = 0.05
            self._last_error = None
            del self._pending[: len(batch)]
            self._search.submit(stored)
            await self._maybe_checkpoint()
            self._committed += len(batch)
            self._settle_flush_waiters()
            for (_, future), row in zip(batch, stored, strict=True):
                if future is not None and not future.done():
                    future.set_result(StoredReceipt(*row))
            if self._pending:
                self._wakeup.set()

    async def _write(self, batch: Sequence[Pending]) -> list[Row]:
        receipts = [r for r, _ in batch]
        try:
            return await self._insert(receipts)
        except sqlite3.IntegrityError:
            # Another writer took our next seq: once more, after the head in the file.
            return await self._insert(receipts)

    async def _insert(self, receipts: list[Receipt]) -> list[Row]:
        """Chain and commit `receipts` in one transaction (two or three trips to the db
        thread: full multi-row INSERTs, the rest in one more, the commit)."""
        db = self._require_db()
        rows: list[Row] = []
        try:
            seq, prev = self._head or await self._read_head(db)
            full = len(receipts) - len(receipts) % ROWS_PER_INSERT
            for part in (receipts[:full], receipts[full:]):
                if not part:
                    continue
                # Redaction, JSON and hashing run in the database thread as executemany
                # pulls the rows: CPU work off the event loop, in the INSERT's own trip.
                size = min(len(part), ROWS_PER_INSERT)
                chunks = chained_chunks(self._redactor, part, seq, prev, rows, size)
                await db.executemany(insert_rows(size), chunks)
                seq, prev = rows[-1][SEQ], rows[-1][HASH]
            await db.commit()
        except BaseException:
            self._head = None  # read it again: the database is the truth after a failure
            with contextlib.suppress(sqlite3.Error):
                await db.rollback()
            raise
        if rows:
            self._head = (rows[-1][SEQ], rows[-1][HASH])
        return rows

    async def _read_head(self, db: aiosqlite.Connection) -> tuple[int, str]:
        async with db.execute("SELECT seq, hash FROM receipts ORDER BY seq DESC LIMIT 1") as cur:
            head = await cur.fetchone()
        return (int(head[0]), str(head[1])) if head else (0, GENESIS_HASH)

    async def _maybe_checkpoint(self) -> None:
        self._batches += 1
        if self._batches % CHECKPOINT_EVERY:
            return
        async with self._require_db().execute("PRAGMA wal_checkpoint(PASSIVE)") as cur:
            busy, frames, done = await cur.fetchone() or (0, 0, 0)
        if busy or done < frames:
            log.warning("ledger WAL checkpoint incomplete (%s of %s pages)", done, frames)

    def _require_db(self) -> aiosqlite.Connection:
        if self._db is None:
            raise StorageError("the receipt ledger is not open")
        return self._db

    async def get(self, receipt_id: str) -> StoredReceipt | None:
        """One receipt by id."""
        return await self._reader.get(receipt_id)

    async def children(self, receipt_id: str, limit: int = 100) -> list[StoredReceipt]:
        """Receipts whose parent is `receipt_id`, oldest first."""
        return await self._reader.children(receipt_id, limit)

    async def page(self, query: ReceiptQuery) -> ReceiptPage:
        """A newest-first page of committed receipts."""
        return await self._reader.page(query)

    async def count(self) -> int:
        """How many receipts are committed."""
        return await self._reader.count()

    async def action_types(self) -> list[str]:
        """Distinct action types."""
        return await self._reader.action_types()

    async def verify(self) -> VerifyReport:
        """Walk the chain; report the first receipt altered, removed or reordered."""
        return await self._reader.verify()

    async def flush_search(self) -> None:
        """Wait until committed receipts are searchable (tests, benchmarks)."""
        await self.flush()
        if self._catch_up is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(self._catch_up)
        await self._search.drain()
