"""Episodic memory of conversations: each chat's turns, numbered conversations (/new starts the
next one), their extractive summaries, and a search over every turn ever recorded."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import cast

from core.memory.model import Role, Turn
from core.memory.search import all_words
from core.memory.store import MemoryStore, Query, Row

MAX_TURN_CHARS = 16_000  # a longer turn (a tool's whole output) is cut: the context is bounded
_CUT = " […]"
_TURN = "SELECT n, chat, conversation, role, text, at, receipt_id, label FROM memory_turns"


def turn_of(row: Row) -> Turn:
    """A memory_turns row as a Turn."""
    n, chat, conversation, role, text, at, receipt_id, label = row
    return Turn(f"t{n}", chat, conversation, cast(Role, role), text, at, receipt_id, label)


def bounded(text: str) -> str:
    """A turn's text, cut to MAX_TURN_CHARS."""
    if len(text) <= MAX_TURN_CHARS:
        return text
    return text[: MAX_TURN_CHARS - len(_CUT)] + _CUT


def insert_query(
    chat: str,
    conversation: int,
    role: Role,
    text: str,
    receipt_id: str | None,
    at: float,
    label: str = "",
) -> Query:
    """Append a turn (already redacted; cut to MAX_TURN_CHARS here) with its label."""
    return Query(
        "INSERT INTO memory_turns (chat, conversation, role, text, receipt_id, at, label)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        (chat, conversation, role, bounded(text), receipt_id, at, label),
    )


def recent_query(chat: str, conversation: int, limit: int, *, unsummarised: bool = False) -> Query:
    """The last `limit` turns of a conversation, newest first."""
    only = " AND summarised = 0" if unsummarised else ""
    return Query(
        f"{_TURN} WHERE chat = ? AND conversation = ?{only} ORDER BY n DESC LIMIT ?",
        (chat, conversation, max(0, limit)),
    )


def parse_recent(rows: Sequence[Row], chars: int | None = None) -> list[Turn]:
    """A recent_query's turns, oldest first; with `chars`, only the newest that hold that
    many characters, and one more (the others could not go before the model anyway)."""
    if chars is not None:
        taken = 0
        for count, row in enumerate(rows):
            if taken >= chars:
                rows = rows[:count]
                break
            taken += len(row[4])
    return [turn_of(row) for row in reversed(rows)]


def summary_query(chat: str, conversation: int) -> Query:
    """The newest summary of a conversation."""
    return Query(
        "SELECT n, text, label FROM memory_summaries WHERE chat = ? AND conversation = ?"
        " ORDER BY n DESC LIMIT 1",
        (chat, conversation),
    )


def parse_summary(rows: Sequence[Row]) -> tuple[str, str, str] | None:
    """(id, text, label) of a summary_query's summary."""
    return (f"s{rows[0][0]}", str(rows[0][1]), str(rows[0][2])) if rows else None


class Conversations:
    """The memory_chats, memory_turns and memory_summaries tables."""

    def __init__(self, store: MemoryStore) -> None:
        self._store = store
        self._current: dict[str, int] = {}  # chat -> its conversation number (a cache)
        # chat -> the lookup under way: a request's context and its turn both ask at once
        self._looking: dict[str, asyncio.Future[int]] = {}

    async def current(self, chat: str, at: float) -> int:
        """The chat's conversation number (1 for a chat never seen, recorded now). Callers
        that ask at once while it is not cached share one lookup."""
        if chat in self._current:
            return self._current[chat]
        looking = self._looking.get(chat)
        if looking is None:
            looking = asyncio.ensure_future(self._look_up(chat, at))
            looking.add_done_callback(_retrieved)
            self._looking[chat] = looking
        # Shielded: a caller cancelled leaves the lookup to the others.
        return await asyncio.shield(looking)

    async def _look_up(self, chat: str, at: float) -> int:
        """Read the chat's number, or record a new chat as conversation 1 (one trip each)."""
        mine = asyncio.current_task()
        try:
            row = await self._store.read_one(
                "SELECT conversation FROM memory_chats WHERE chat = ?", (chat,)
            )
            if row is None:
                inserted = await self._store.write(
                    "INSERT INTO memory_chats (chat, conversation, started_at) VALUES (?, 1, ?)"
                    " ON CONFLICT(chat) DO NOTHING",
                    (chat, at),
                )
                if not inserted:  # recorded meanwhile (a /new): read what it holds
                    return await self._look_up(chat, at)
            number = 1 if row is None else int(row[0])
            if self._looking.get(chat) is mine:  # not started over by a /new meanwhile
                self._current[chat] = number
            return number
        finally:
            if self._looking.get(chat) is mine:
                del self._looking[chat]

    async def record(
        self, chat: str, role: Role, text: str, receipt_id: str | None, at: float
    ) -> None:
        """Append a turn (already redacted) to the chat's current conversation."""
        query = insert_query(chat, await self.current(chat, at), role, text, receipt_id, at)
        await self._store.write(query.sql, query.params)

    async def recent(self, chat: str, limit: int) -> list[Turn]:
        """The last `limit` turns of the chat's current conversation, oldest first."""
        query = recent_query(chat, await self.current(chat, 0.0), limit)
        return parse_recent(await self._store.read(query.sql, query.params))

    async def new_conversation(self, chat: str, at: float) -> int:
        """Start the chat's next conversation; its number. Earlier turns stay searchable."""
        await self._store.write(
            "INSERT INTO memory_chats (chat, conversation, started_at) VALUES (?, 2, ?)"
            " ON CONFLICT(chat) DO UPDATE SET conversation = conversation + 1,"
            " started_at = excluded.started_at",
            (chat, at),
        )
        self._current.pop(chat, None)
        self._looking.pop(chat, None)  # a lookup under way may hold the old number
        return await self.current(chat, at)

    async def summary(self, chat: str) -> tuple[str, str, str] | None:
        """(id, text, label) of the newest summary of the chat's current conversation, if any."""
        query = summary_query(chat, await self.current(chat, 0.0))
        return parse_summary(await self._store.read(query.sql, query.params))

    async def search(self, query: str, limit: int = 10) -> list[Turn]:
        """Turns of any conversation holding every word of `query`, best match first."""
        expression = all_words(query)
        if expression is None:
            return []
        rows = await self._store.read(
            "SELECT t.n, t.chat, t.conversation, t.role, t.text, t.at, t.receipt_id, t.label"
            " FROM memory_turns_fts JOIN memory_turns AS t ON t.n = memory_turns_fts.rowid"
            " WHERE memory_turns_fts MATCH ? ORDER BY memory_turns_fts.rank LIMIT ?",
            (expression, max(0, limit)),
        )
        return [turn_of(row) for row in rows]


def _retrieved(lookup: asyncio.Future[int]) -> None:
    """A shared lookup's failure is its callers'; marked seen so none goes unreported."""
    if not lookup.cancelled():
        lookup.exception()
