"""The update inbox in state.db: every update a channel receives is kept here before the
platform is told it arrived, and marked done once it has been handled.

So a crash loses nothing: updates still open at the next start are handed on again, each
update id once (the platform may send an unconfirmed update again; a kept one is not taken
twice). An update whose handling was cut short `max_attempts` times (it may be what kills
the process) is set aside with an `update_abandoned` receipt instead of looping forever.
Writes go through state.db's batching writer (writer.py): a getUpdates batch is one
statement, and it shares its commit with the done marks and outbox rows of the messages
being handled meanwhile.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

import aiosqlite

from core.delivery.writer import StateWriter, Write
from core.errors import StorageError
from core.receipts.base import ReceiptStore
from core.receipts.model import Receipt, ReceiptStatus
from core.storage.versions import Schema, migrate

log = logging.getLogger(__name__)

SCHEMA = Schema(
    "inbox",
    (
        """
CREATE TABLE IF NOT EXISTS inbox (
    channel TEXT NOT NULL,
    update_id INTEGER NOT NULL,
    payload TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'open',
    attempts INTEGER NOT NULL DEFAULT 1,
    received_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    PRIMARY KEY (channel, update_id)
);
CREATE INDEX IF NOT EXISTS inbox_open ON inbox(state, channel, update_id);
""",
    ),
)

MAX_ATTEMPTS = 3
# Telegram keeps an unconfirmed update for 24 hours; a done row older than that cannot come
# again, and forgetting it keeps a random update id (after a week of silence) from matching.
KEEP_SECONDS = 2 * 86400
PRUNE_EVERY = 10_000  # done marks between two prunes
CHUNK = 500  # ids per statement (SQLite's variable limit is far above)
# What the update said is not kept once handled (it may hold a pasted key).
_DONE = (
    "UPDATE inbox SET state = 'done', payload = '', updated_at = ?"
    " WHERE channel = ? AND update_id = ?"
)
_PRUNE = "DELETE FROM inbox WHERE state != 'open' AND updated_at < ?"


class InboxState(StrEnum):
    """Where an update stands."""

    OPEN = "open"  # kept, not handled yet (or cut short by a stop or a crash)
    DONE = "done"
    ABANDONED = "abandoned"  # cut short max_attempts times


@dataclass(frozen=True, slots=True)
class Kept:
    """An update the inbox holds: its id, what the platform sent, handling attempts so far."""

    update_id: int
    payload: str
    attempts: int


@dataclass(frozen=True, slots=True)
class Unfinished:
    """What a start finds open: updates to hand on again, and those set aside for good."""

    replay: tuple[Kept, ...]
    abandoned: tuple[Kept, ...]


class UpdateInbox:
    """Owner of the inbox table."""

    def __init__(
        self,
        db: aiosqlite.Connection,
        writer: StateWriter,
        ledger: ReceiptStore,
        *,
        max_attempts: int = MAX_ATTEMPTS,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self._db = db
        self._writer = writer
        self._ledger = ledger
        self._max_attempts = max(1, max_attempts)
        self._wall = wall
        self._since_prune = 0

    async def setup(self) -> None:
        """Create or upgrade the table; forget old finished rows."""
        await migrate(self._db, SCHEMA)
        await self._prune()

    async def accept(self, channel: str, updates: Sequence[tuple[int, str]]) -> set[int]:
        """Keep (update id, payload) pairs durably, in one statement; returns the ids that
        are new (one already kept is being handled, or was). Raises StorageError."""
        if not updates:
            return set()
        now = self._wall()
        rows = ",".join("(?, ?, ?, ?, ?)" for _ in updates)
        params: list[object] = []
        for update_id, payload in updates:
            params += [channel, update_id, payload, now, now]
        sql = (
            "INSERT INTO inbox (channel, update_id, payload, received_at, updated_at)"
            f" VALUES {rows} ON CONFLICT(channel, update_id) DO NOTHING RETURNING update_id"
        )
        try:
            found = await self._writer.write(lambda conn: conn.execute(sql, params).fetchall())
        except StorageError as exc:
            raise StorageError(
                f"cannot keep {len(updates)} update(s) from {channel}: {exc}"
            ) from None
        return {int(row[0]) for row in found}

    async def done(self, channel: str, update_id: int) -> None:
        """Mark an update handled; returns once the mark is on disk (it shares its commit
        with whatever else is being written). Raises StorageError."""
        await self._writer.write(self.done_mark(channel, update_id))

    def done_mark(self, channel: str, update_id: int) -> Write:
        """The write that marks an update handled, for a transaction that also stores the
        update's outcome (its answer's outbox row), so both land together. Every
        PRUNE_EVERY-th mark also forgets the old finished rows."""
        now = self._wall()
        mark = (now, channel, update_id)
        self._since_prune += 1
        prune = self._since_prune >= PRUNE_EVERY
        if prune:
            self._since_prune = 0

        def write(conn: sqlite3.Connection) -> None:
            conn.execute(_DONE, mark)
            if prune:
                conn.execute(_PRUNE, (now - KEEP_SECONDS,))

        return write

    async def unfinished(self, channel: str) -> Unfinished:
        """Updates of `channel` left open by a stop or a crash, oldest first. Each counts one
        more attempt; one cut short max_attempts times is abandoned, with a receipt."""
        async with self._db.execute(
            "SELECT update_id, payload, attempts FROM inbox"
            " WHERE state = 'open' AND channel = ? ORDER BY update_id",
            (channel,),
        ) as cur:
            found = [Kept(int(u), str(p), int(a)) for u, p, a in await cur.fetchall()]
        give_up = [k for k in found if k.attempts >= self._max_attempts]
        again = [Kept(k.update_id, k.payload, k.attempts + 1) for k in found if k not in give_up]
        now = self._wall()
        await self._set(channel, again, "state = 'open', attempts = attempts + 1", now)
        await self._set(channel, give_up, "state = 'abandoned'", now)
        for kept in give_up:
            log.warning(
                "inbox: update %d from %s was cut short %d times; set aside",
                kept.update_id,
                channel,
                kept.attempts,
            )
            self._ledger.append(
                Receipt(
                    action_type="update_abandoned",
                    action_name=channel,
                    inputs={"update_id": kept.update_id, "bytes": len(kept.payload)},
                    outputs={"attempts": kept.attempts},
                    status=ReceiptStatus.FAILURE,
                    error_message=f"handling was cut short {kept.attempts} times",
                    metadata={"channel": channel},
                )
            )
        return Unfinished(tuple(again), tuple(give_up))

    async def state_of(self, channel: str, update_id: int) -> tuple[InboxState, int] | None:
        """An update's state and attempts (for tests and tooling)."""
        async with self._db.execute(
            "SELECT state, attempts FROM inbox WHERE channel = ? AND update_id = ?",
            (channel, update_id),
        ) as cur:
            row = await cur.fetchone()
        return (InboxState(row[0]), int(row[1])) if row is not None else None

    async def _set(self, channel: str, kept: list[Kept], change: str, now: float) -> None:
        for start in range(0, len(kept), CHUNK):
            ids = [k.update_id for k in kept[start : start + CHUNK]]
            marks = ",".join("?" * len(ids))
            sql = (
                f"UPDATE inbox SET {change}, updated_at = ?"
                f" WHERE channel = ? AND update_id IN ({marks})"
            )
            await self._writer.execute(sql, (now, channel, *ids))

    async def _prune(self) -> None:
        self._since_prune = 0
        await self._writer.execute(_PRUNE, (self._wall() - KEEP_SECONDS,))
