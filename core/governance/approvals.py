"""Approvals in state.db: the exact action and its hash, and a state machine that only
moves forward with conditional updates, so the first decision wins and nothing runs twice."""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

import aiosqlite

from core.events import MessageRef
from core.storage.versions import Schema, migrate
from core.tools.action import ToolAction

SCHEMA = Schema(
    "approvals",
    (
        """
CREATE TABLE IF NOT EXISTS approvals (
    id TEXT PRIMARY KEY,
    action TEXT NOT NULL,
    action_hash TEXT NOT NULL,
    tier TEXT NOT NULL,
    reason TEXT NOT NULL,
    card_id TEXT NOT NULL,
    state TEXT NOT NULL,
    requested_via TEXT NOT NULL,
    quest_id TEXT,
    created_at REAL NOT NULL,
    expires_at REAL NOT NULL,
    decided_at REAL,
    decided_by TEXT,
    decided_via TEXT,
    finished_at REAL,
    result TEXT
);
CREATE INDEX IF NOT EXISTS approvals_by_state ON approvals(state, expires_at);
CREATE TABLE IF NOT EXISTS approval_copies (
    approval_id TEXT NOT NULL,
    channel TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    PRIMARY KEY (approval_id, channel, chat_id, message_id)
);
CREATE TABLE IF NOT EXISTS approval_reminders (
    approval_id TEXT PRIMARY KEY,
    reminded_at REAL NOT NULL
);
""",
        # The inbound update (a message, a press) that asked: one approval per update,
        # however often a crash makes the update come again. NULLs never collide.
        """
ALTER TABLE approvals ADD COLUMN request_key TEXT;
CREATE UNIQUE INDEX IF NOT EXISTS approvals_by_request ON approvals(request_key);
""",
    ),
)


class ApprovalState(StrEnum):
    """pending -> approved -> executing -> executed (or not_run: approved, but nothing could
    run it); or denied / expired / interrupted."""

    PENDING = "pending"
    APPROVED = "approved"
    EXECUTING = "executing"
    EXECUTED = "executed"
    NOT_RUN = "not_run"
    DENIED = "denied"
    EXPIRED = "expired"
    INTERRUPTED = "interrupted"


@dataclass(frozen=True, slots=True)
class Approval:
    """One request for the owner's decision."""

    id: str
    action: ToolAction
    action_hash: str
    tier: str
    reason: str
    card_id: str
    state: ApprovalState
    requested_via: str
    quest_id: str | None
    created_at: float
    expires_at: float
    decided_at: float | None
    decided_by: str | None
    decided_via: str | None
    finished_at: float | None
    result: str | None


_COLUMNS = (
    "id, action, action_hash, tier, reason, card_id, state, requested_via, quest_id, created_at,"
    " expires_at, decided_at, decided_by, decided_via, finished_at, result"
)


def _row(values: tuple[object, ...]) -> Approval:
    fields = list(values)
    fields[1] = ToolAction.from_json(str(fields[1]))
    fields[6] = ApprovalState(str(fields[6]))
    return Approval(*fields)  # type: ignore[arg-type]


class ApprovalStore:
    """Persistence for approvals. Every transition is one conditional UPDATE."""

    def __init__(self, db: aiosqlite.Connection, clock: Callable[[], float] = time.time) -> None:
        self._db = db
        self._clock = clock

    async def setup(self) -> None:
        """Create or upgrade the tables."""
        await migrate(self._db, SCHEMA)

    async def create(
        self,
        action: ToolAction,
        tier: str,
        reason: str,
        card_id: str,
        via: str,
        ttl: float,
        quest_id: str | None = None,
        *,
        key: str | None = None,
    ) -> Approval:
        """A new pending approval; with `key` (the identity of the inbound update that asked
        for it), the one already created for that key if there is one, whatever its state."""
        now = self._clock()
        approval_id = secrets.token_hex(8)
        await self._db.execute(
            f"INSERT INTO approvals ({_COLUMNS}, request_key) VALUES ({', '.join('?' * 17)})"
            " ON CONFLICT(request_key) DO NOTHING",
            (
                approval_id,
                action.to_json(),
                action.digest,
                tier,
                reason,
                card_id,
                ApprovalState.PENDING,
                via,
                quest_id,
                now,
                now + ttl,
                None,
                None,
                None,
                None,
                None,
                key,
            ),
        )
        found = await self.get(approval_id) if key is None else await self.requested(key)
        assert found is not None
        return found

    async def requested(self, key: str) -> Approval | None:
        """The approval the inbound update `key` asked for, if any."""
        sql = f"SELECT {_COLUMNS} FROM approvals WHERE request_key = ?"
        async with self._db.execute(sql, (key,)) as cur:
            row = await cur.fetchone()
        return _row(tuple(row)) if row else None

    async def get(self, approval_id: str) -> Approval | None:
        """One approval."""
        sql = f"SELECT {_COLUMNS} FROM approvals WHERE id = ?"
        async with self._db.execute(sql, (approval_id,)) as cur:
            row = await cur.fetchone()
        return _row(tuple(row)) if row else None

    async def in_states(self, *states: ApprovalState, limit: int | None = None) -> list[Approval]:
        """Approvals in any of the given states, oldest first (the first `limit` of them)."""
        marks = ", ".join("?" * len(states))
        sql = (
            f"SELECT {_COLUMNS} FROM approvals WHERE state IN ({marks}) ORDER BY created_at LIMIT ?"
        )
        params = [*(str(s) for s in states), -1 if limit is None else limit]  # -1: no limit
        async with self._db.execute(sql, params) as cur:
            return [_row(tuple(r)) for r in await cur.fetchall()]

    async def count(self, state: ApprovalState) -> int:
        """How many approvals are in `state`."""
        sql = "SELECT COUNT(*) FROM approvals WHERE state = ?"
        async with self._db.execute(sql, (str(state),)) as cur:
            row = await cur.fetchone()
        return int(row[0]) if row else 0

    async def move(
        self, approval_id: str, old: ApprovalState, new: ApprovalState, **changes: object
    ) -> bool:
        """Move from `old` to `new` if (and only if) the approval is still in `old`."""
        sets = ", ".join(["state = ?", *(f"{k} = ?" for k in changes)])
        cur = await self._db.execute(
            f"UPDATE approvals SET {sets} WHERE id = ? AND state = ?",
            (str(new), *changes.values(), approval_id, str(old)),
        )
        return cur.rowcount == 1

    async def add_copy(self, approval_id: str, ref: MessageRef) -> None:
        """Remember where the approval card was delivered (to edit it after a restart)."""
        await self._db.execute(
            "INSERT OR IGNORE INTO approval_copies VALUES (?, ?, ?, ?)",
            (approval_id, ref.channel, ref.chat_id, ref.message_id),
        )

    async def claim_reminder(self, approval_id: str) -> bool:
        """True for the one caller that may send this approval's reminder (ever)."""
        cur = await self._db.execute(
            "INSERT OR IGNORE INTO approval_reminders VALUES (?, ?)", (approval_id, self._clock())
        )
        return cur.rowcount == 1

    async def copies(self, approval_id: str) -> list[MessageRef]:
        """Where the card was delivered."""
        sql = "SELECT channel, chat_id, message_id FROM approval_copies WHERE approval_id = ?"
        async with self._db.execute(sql, (approval_id,)) as cur:
            return [MessageRef(*r) for r in await cur.fetchall()]
