"""The ledger's write connection: chained batches committed one transaction each."""

from __future__ import annotations

import contextlib
import logging
import sqlite3
from pathlib import Path

import aiosqlite

from core.errors import StorageError
from core.receipts.chain import HASH, SEQ, Row, chained_chunks
from core.receipts.model import GENESIS_HASH, Receipt
from core.receipts.redaction import Redactor
from core.receipts.schema import PRAGMAS, ROWS_PER_INSERT, SCHEMA, insert_rows
from core.storage.connections import open_db

log = logging.getLogger(__name__)

CHECKPOINT_EVERY = 64  # batches between explicit WAL checkpoints


class ChainWriter:
    """Appends receipts to the ledger file, each hashed onto the one before it.

    It keeps the chain's head (last seq and hash) in memory. Were another writer to add
    rows, the next INSERT would hit an existing seq, fail, and the head would be read again
    before the retry.
    """

    def __init__(self, path: Path, redactor: Redactor) -> None:
        self.path = path
        self._redactor = redactor
        self._db: aiosqlite.Connection | None = None
        self._head: tuple[int, str] | None = None  # (seq, hash) of the last committed receipt
        self._batches = 0

    async def open(self) -> None:
        """Open (or create) the file and its schema, upgraded; StorageError naming the file
        when it cannot (or it is newer than this code)."""
        # Implicit transactions: an INSERT begins one (IMMEDIATE), commit() ends it, so a
        # batch costs two trips to the database thread.
        self._db = await open_db(
            self.path, SCHEMA, "receipt ledger", pragmas=PRAGMAS, isolation_level="IMMEDIATE"
        )

    async def close(self) -> None:
        """Close the connection."""
        if self._db is not None:
            await self._db.close()
            self._db = None

    async def insert(self, receipts: list[Receipt]) -> list[Row]:
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

    async def maybe_checkpoint(self) -> None:
        """Checkpoint the WAL every CHECKPOINT_EVERY batches."""
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
