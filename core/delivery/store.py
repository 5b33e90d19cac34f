"""The outbox table in state.db: one row per card (or card edit) to deliver, and its progress.

A row is `pending` until every part has a platform message id, then `delivered`; or `failed`
after too many attempts or a permanent refusal. Message ids are stored as each part lands,
so a restart resumes at the first part not yet delivered and never sends one twice.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import aiosqlite

from core.delivery.writer import StateWriter, Write
from core.events import Button, Card, CardKind, MessageRef
from core.storage.versions import Schema, migrate

SCHEMA = Schema(
    "outbox",
    (
        """
CREATE TABLE IF NOT EXISTS outbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    key TEXT NOT NULL UNIQUE,
    channel TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    correlation_id TEXT NOT NULL,
    target_id TEXT,
    card TEXT NOT NULL,
    parts INTEGER NOT NULL DEFAULT 1,
    message_ids TEXT NOT NULL DEFAULT '[]',
    state TEXT NOT NULL DEFAULT 'pending',
    attempts INTEGER NOT NULL DEFAULT 0,
    error TEXT,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS outbox_by_state ON outbox(state, channel, id);
CREATE INDEX IF NOT EXISTS outbox_by_card ON outbox(correlation_id);
""",
    ),
)

_INSERT = (
    "INSERT INTO outbox (key, channel, chat_id, kind, correlation_id, target_id, card,"
    " parts, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    " ON CONFLICT(key) DO NOTHING RETURNING id"
)
_RESTART = (
    "UPDATE outbox SET card = ?, parts = ?, target_id = ?, message_ids = '[]',"
    " state = 'pending', attempts = 0, error = NULL, updated_at = ? WHERE key = ? RETURNING id"
)
_COLUMNS = "id, key, channel, chat_id, kind, target_id, card, parts, message_ids, state, attempts"


class OutboxState(StrEnum):
    """Where a row stands."""

    PENDING = "pending"
    DELIVERED = "delivered"
    FAILED = "failed"


class DeliveryKind(StrEnum):
    """A new card, or an edit of one already delivered."""

    SEND = "send"
    EDIT = "edit"


@dataclass(eq=False)
class OutboxRow:
    """One delivery as the outbox tracks it in memory (mirrors its row)."""

    id: int
    key: str
    channel: str
    chat_id: str
    kind: DeliveryKind
    card: Card
    parts: int = 1
    target_id: str | None = None
    message_ids: list[str] = field(default_factory=list)
    state: OutboxState = OutboxState.PENDING
    attempts: int = 0
    in_flight: bool = False
    revision: Card | None = None  # new content that came while the card was on its way

    @classmethod
    def edit_of(cls, ref: MessageRef, card: Card) -> OutboxRow:
        """A not-yet-stored edit of a delivered message to `card`."""
        return cls(
            id=0,
            key=edit_key(ref, card),
            channel=ref.channel,
            chat_id=ref.chat_id,
            kind=DeliveryKind.EDIT,
            card=card,
            target_id=ref.message_id,
        )

    @property
    def lane(self) -> tuple[str, str]:
        """Rows to one chat go out in order, one at a time."""
        return self.channel, self.chat_id

    @property
    def ref(self) -> MessageRef | None:
        """The message that stands for the card: the last part (it carries the buttons)."""
        if not self.message_ids:
            return None
        return MessageRef(self.channel, self.chat_id, self.message_ids[-1])


def card_to_json(card: Card) -> str:
    """A card as compact JSON (what the row stores)."""
    return json.dumps(
        {
            "kind": card.kind.value,
            "title": card.title,
            "body": card.body,
            "fields": [list(pair) for pair in card.fields],
            "buttons": [[b.label, b.action_token, b.url] for b in card.buttons],
            "correlation_id": card.correlation_id,
        },
        ensure_ascii=False,
        separators=(",", ":"),
    )


def card_from_json(text: str) -> Card:
    """The card a row stores."""
    data: dict[str, Any] = json.loads(text)
    return Card(
        kind=CardKind(data["kind"]),
        title=data["title"],
        body=data["body"],
        fields=tuple((str(k), str(v)) for k, v in data["fields"]),
        buttons=tuple(Button(label, token, url) for label, token, url in data["buttons"]),
        correlation_id=data["correlation_id"],
    )


def edit_key(ref: MessageRef, card: Card) -> str:
    """An edit's idempotency key: the message and the content it gets."""
    digest = hashlib.sha256(card_to_json(card).encode()).hexdigest()[:24]
    return f"edit:{ref.channel}:{ref.chat_id}:{ref.message_id}:{digest}"


def _row(values: tuple[Any, ...]) -> OutboxRow:
    row_id, key, channel, chat_id, kind, target_id, card, parts, ids, state, attempts = values
    return OutboxRow(
        id=row_id,
        key=key,
        channel=channel,
        chat_id=chat_id,
        kind=DeliveryKind(kind),
        card=card_from_json(card),
        parts=parts,
        target_id=target_id,
        message_ids=[str(i) for i in json.loads(ids)],
        state=OutboxState(state),
        attempts=attempts,
    )


@dataclass(frozen=True, slots=True)
class Backlog:
    """A channel's cards still waiting after a failed attempt: how many, since when."""

    channel: str
    cards: int
    oldest: float  # when the oldest of them was queued (epoch seconds)


class OutboxStore:
    """Reads the outbox table through state.db's shared connection; writes it through the
    batching writer (each write awaited until its batch is on disk)."""

    def __init__(
        self,
        db: aiosqlite.Connection,
        writer: StateWriter,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self._db = db
        self._writer = writer
        self._wall = wall

    async def setup(self) -> None:
        """Create or upgrade the table."""
        await migrate(self._db, SCHEMA)

    async def add(self, row: OutboxRow, alongside: Write | None = None) -> bool:
        """Store `row` and set its id; a key already on disk (a failed or long-forgotten card
        sent again) is taken over by this delivery (its old outcome is gone). `alongside`
        (the done mark of the update the card answers) runs in the same transaction, in a
        savepoint of its own: one that fails is undone alone, the row is stored. Returns
        whether `alongside` was stored with the row."""
        now = self._wall()
        card = card_to_json(row.card)
        insert = (
            row.key,
            row.channel,
            row.chat_id,
            row.kind.value,
            row.card.correlation_id,
            row.target_id,
            card,
            row.parts,
            now,
            now,
        )
        restart = (card, row.parts, row.target_id, now, row.key)

        def add(conn: sqlite3.Connection) -> tuple[int, bool]:
            created = conn.execute(_INSERT, insert).fetchall()
            found = created or conn.execute(_RESTART, restart).fetchall()
            return int(found[0][0]), alongside is not None and _also(conn, alongside)

        row.id, stored = await self._writer.write(add)
        return stored

    async def part_delivered(self, row: OutboxRow, message_id: str) -> None:
        """Record one more delivered part (and the row as delivered when it was the last)."""
        row.message_ids.append(message_id)
        if len(row.message_ids) >= row.parts:
            row.state = OutboxState.DELIVERED
        await self._update(
            "UPDATE outbox SET message_ids = ?, state = ?, error = NULL, updated_at = ?"
            " WHERE id = ?",
            (json.dumps(row.message_ids), row.state.value, self._wall(), row.id),
        )

    async def attempt_failed(self, row: OutboxRow, error: str) -> None:
        """Count a failed attempt."""
        await self._update(
            "UPDATE outbox SET attempts = ?, error = ?, updated_at = ? WHERE id = ?",
            (row.attempts, error[:500], self._wall(), row.id),
        )

    async def failed(self, row: OutboxRow, error: str) -> None:
        """Give up on a row for good."""
        row.state = OutboxState.FAILED
        await self._update(
            "UPDATE outbox SET state = 'failed', attempts = ?, error = ?, updated_at = ?"
            " WHERE id = ?",
            (row.attempts, error[:500], self._wall(), row.id),
        )

    async def _update(self, sql: str, params: tuple[object, ...]) -> int:
        return await self._writer.execute(sql, params)

    async def pending(self, channel: str) -> list[OutboxRow]:
        """Undelivered rows of a channel, oldest first."""
        async with self._db.execute(
            f"SELECT {_COLUMNS} FROM outbox WHERE state = 'pending' AND channel = ? ORDER BY id",
            (channel,),
        ) as cur:
            return [_row(tuple(values)) for values in await cur.fetchall()]

    async def recent_deliveries(
        self, channel: str, limit: int
    ) -> list[tuple[str, str, MessageRef]]:
        """(key, card id, message) of the latest delivered cards, oldest first."""
        async with self._db.execute(
            "SELECT key, correlation_id, chat_id, message_ids FROM outbox"
            " WHERE state = 'delivered' AND kind = 'send' AND channel = ?"
            " ORDER BY id DESC LIMIT ?",
            (channel, limit),
        ) as cur:
            rows = await cur.fetchall()
        found = []
        for key, correlation_id, chat_id, ids in reversed(list(rows)):
            message_ids = json.loads(ids)
            if message_ids:
                ref = MessageRef(channel, chat_id, str(message_ids[-1]))
                found.append((key, correlation_id, ref))
        return found

    async def revise(self, rows: list[OutboxRow], card: Card, parts: int) -> None:
        """Replace the content of rows not yet started (a card edited before it went out)."""
        for row in rows:
            row.card, row.parts = card, parts
        marks = ",".join("?" * len(rows))
        await self._update(
            f"UPDATE outbox SET card = ?, parts = ?, updated_at = ? WHERE id IN ({marks})"
            " AND message_ids = '[]' AND state = 'pending'",
            (card_to_json(card), parts, self._wall(), *(row.id for row in rows)),
        )

    async def prune(self, older_than: float) -> int:
        """Forget delivered and failed rows older than `older_than` seconds."""
        return await self._update(
            "DELETE FROM outbox WHERE state != 'pending' AND updated_at < ?",
            (self._wall() - older_than,),
        )

    async def failing(self) -> list[Backlog]:
        """Per channel, the pending rows that have failed at least once (what the delivery
        health check watches)."""
        async with self._db.execute(
            "SELECT channel, COUNT(*), MIN(created_at) FROM outbox"
            " WHERE state = 'pending' AND attempts > 0 GROUP BY channel"
        ) as cur:
            return [Backlog(str(c), int(n), float(t)) for c, n, t in await cur.fetchall()]

    async def state_of(self, key: str) -> tuple[OutboxState, list[str]] | None:
        """A row's state and message ids by key (for tests and tooling)."""
        async with self._db.execute(
            "SELECT state, message_ids FROM outbox WHERE key = ?", (key,)
        ) as cur:
            found = await cur.fetchone()
        if found is None:
            return None
        return OutboxState(found[0]), [str(i) for i in json.loads(found[1])]


def _also(conn: sqlite3.Connection, write: Write) -> bool:
    """Run `write` in a savepoint inside the current transaction; whether it was stored."""
    conn.execute("SAVEPOINT alongside")
    try:
        write(conn)
    except sqlite3.Error:
        conn.execute("ROLLBACK TO alongside")
        return False
    finally:
        conn.execute("RELEASE alongside")
    return True
