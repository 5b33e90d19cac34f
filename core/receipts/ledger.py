"""SQLite receipt ledger: batched, hash-chained, append-only writes through aiosqlite."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
from collections.abc import Awaitable
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
from core.receipts.evidence import Evidence
from core.receipts.fingerprints import Fingerprint, KeyFingerprint
from core.receipts.kinds import KindRegistry
from core.receipts.model import Receipt, StoredReceipt
from core.receipts.reader import LedgerReader
from core.receipts.redaction import Redactor
from core.receipts.registry import KINDS
from core.receipts.schema import COLUMNS
from core.receipts.search import SearchIndex
from core.receipts.verify import verify_ledger
from core.receipts.writer import ChainWriter
from core.runtime.backoff import BackoffConfig
from core.runtime.tasks import Supervisor
from core.storage.group_commit import Batching, GroupCommit

log = logging.getLogger(__name__)

MAX_PENDING = 200_000  # receipts queued beyond this are dropped (and counted)
WRITE_RETRY = BackoffConfig(min_delay=0.05, max_delay=5.0)  # after a failed write

# The log record's attribute naming a kind written but not registered (the tests fail on it).
UNREGISTERED = "unregistered_kind"


class SqliteLedger:
    """The ReceiptStore on SQLite.

    `append` queues a receipt; a writer task commits queued receipts in batches (one
    transaction each, core/storage/group_commit.py; a failed batch is tried again),
    redacting each and chaining its hash to the one before it. `append_durable` and `flush`
    wait for the commit. Reads go through a connection of their own (LedgerReader), search
    through a derived index (SearchIndex). With a Checkpointer, the head is signed every so
    often and at close (checkpoints.py).

    A receipt whose kind is not in `kinds` (core/receipts/registry.py) is stored all the
    same, never lost or refused over its name, and logged once per kind; the test suite
    fails on that log line (tests/receipt_kinds.py), so production never crashes on it.
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
        kinds: KindRegistry = KINDS,
    ) -> None:
        self.path = path
        self._kinds = kinds.names
        self.unregistered: set[str] = set()  # kinds written here that are not registered
        self._checkpoints = checkpoints
        self._chain = ChainWriter(path, redactor or Redactor())
        self._supervisor = tasks or Supervisor()
        self._commits: GroupCommit[Receipt, Row] = GroupCommit(
            self._write,
            what="receipts",
            name="ledger-writer",
            tasks=self._supervisor,
            batching=Batching(
                size=batch_size,
                most=batch_size * 8,
                gather=flush_interval,
                retry=WRITE_RETRY,
                max_pending=MAX_PENDING,
            ),
            after=self._after_commit,
            private=True,  # a writer's error may quote receipt data that was never redacted
        )
        self._added: list[Row] = []  # the rows the last commit added
        self._catch_up: asyncio.Task[None] | None = None
        self._head_seq = 0  # the last seq committed, kept as commits land
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
        """Open (or create) the database, check it, and start the writer; StorageError
        naming the part that cannot open, with nothing left open."""
        try:
            await as_storage_error(
                self._open_ledger(), f"{self.path}: cannot open the receipt ledger"
            )
            await as_storage_error(
                self._search.open(), f"{self._search.path}: cannot open the search index"
            )
            head = await self._reader.head()
            self._head_seq = head[0]
            if self._checkpoints is not None:
                await self._checkpointing(self._checkpoints.start(head, self._supervisor))
        except BaseException:
            await self._search.close()
            await self._reader.close()
            await self._chain.close()
            raise
        self._commits.start()
        await self._begin_chain(head[0])
        self._catch_up = self._supervisor.spawn(self._index_missing(head[0]), name="ledger-reindex")

    async def _open_ledger(self) -> None:
        """The write connection (it makes the folder, the file and its schema), then the
        read one."""
        await self._chain.open()
        await self._reader.open()

    async def _begin_chain(self, head: int) -> None:
        """A checkpoint chain that begins over receipts already here is recorded in the
        ledger first, then checkpointed: what removed the last chain cannot hide it
        (chain_start.py)."""
        receipt = self._checkpoints.beginning(head) if self._checkpoints is not None else None
        if receipt is None or self._checkpoints is None:
            return
        if receipt.error_message is not None:
            log.critical("%s (lancelot receipts verify fails from now on)", receipt.error_message)
        await self.append_durable(receipt)
        await self._checkpointing(self._checkpoints.now())

    async def _checkpointing(self, step: Awaitable[object]) -> None:
        """Await a step that writes a checkpoint; StorageError naming the ledger if it fails."""
        await as_storage_error(step, f"{self.path}: cannot write a checkpoint")

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
        if self._commits.started:
            await self._commits.stop()
            if self._checkpoints is not None:
                await self._checkpoints.stop()  # the shutdown checkpoint
        if self._catch_up is not None:
            self._catch_up.cancel()
            with contextlib.suppress(asyncio.CancelledError, sqlite3.Error, StorageError):
                await self._catch_up
        await self._search.close()
        await self._reader.close()
        await self._chain.close()

    @property
    def healthy(self) -> bool:
        """False while writes are failing."""
        return self._commits.last_error is None

    @property
    def dropped(self) -> int:
        """Receipts refused because the writer had stopped or could not keep up."""
        return self._commits.dropped

    def append(self, receipt: Receipt) -> None:
        """Queue a receipt; it is committed within the flush interval."""
        if receipt.action_type not in self._kinds:
            self._note_unregistered(receipt.action_type)
        self._commits.append(receipt)

    async def append_durable(self, receipt: Receipt) -> StoredReceipt:
        """Queue a receipt and wait until it is committed."""
        if receipt.action_type not in self._kinds:
            self._note_unregistered(receipt.action_type)
        return StoredReceipt(*await self._commits.write(receipt))

    def _note_unregistered(self, kind: str) -> None:
        """Note a kind missing from the registry, logging it the first time."""
        if kind in self.unregistered:
            return
        self.unregistered.add(kind)
        log.error(
            "receipt kind %r is not registered in core/receipts/registry.py; stored anyway",
            kind,
            extra={UNREGISTERED: kind},
        )

    async def flush(self) -> None:
        """Wait until everything queued before this call is committed."""
        await self._commits.flush()

    @property
    def recorded(self) -> int:
        """How many receipts this ledger holds: committed (the head's seq, as commits land)
        and queued to commit within the flush interval."""
        return self._head_seq + self._commits.queued

    async def _after_commit(self) -> None:
        added, self._added = self._added, []
        if added:
            self._head_seq = max(self._head_seq, int(added[-1][SEQ]))
        self._search.submit(added)
        if added and self._checkpoints is not None:
            self._checkpoints.note(added[-1][SEQ], added[-1][HASH])
        await self._chain.maybe_checkpoint()

    async def _write(self, receipts: list[Receipt]) -> list[Row]:
        """Commit a batch: the row standing for each receipt (the rows added are noted for
        `_after_commit`)."""
        try:
            self._added = await self._chain.insert(receipts)
            return self._added
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
        self._added = await self._chain.insert(list(fresh.values())) if fresh else []
        known.update((row[ID], row) for row in self._added)
        return [known[r.id] for r in receipts]

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

    async def verify(self, against: Fingerprint | KeyFingerprint | None = None) -> VerifyReport:
        """Walk the chain and check it against every checkpoint, the key files (and
        `against`); report the first receipt altered, removed or reordered, a rewrite, a cut
        tail, or a checkpoint or key file tampered with. Hashing every row is CPU work: it
        runs in a thread, on a read-only connection of its own."""
        return await asyncio.to_thread(self._verify, against)

    def _verify(self, against: Fingerprint | KeyFingerprint | None) -> VerifyReport:
        cp = self._checkpoints
        try:
            evidence = Evidence.beside(cp.log, cp.every_receipts) if cp is not None else None
        except StorageError as exc:
            return VerifyReport(False, 0, reason=str(exc), file=str(self.path))
        return verify_ledger(self.path, evidence, against)

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


async def as_storage_error(step: Awaitable[object], failure: str) -> None:
    """Await `step`; its sqlite3 or OS error becomes a StorageError that says `failure`
    (which names the file) and why."""
    try:
        await step
    except (sqlite3.Error, OSError) as exc:
        raise StorageError(f"{failure}: {exc}") from None
