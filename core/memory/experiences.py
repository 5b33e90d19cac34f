"""Task experiences: what the agent did for a request and how it went, found again by
requests that read alike (FTS5, weighed by recency)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from core.memory.commits import new_id
from core.memory.model import Experience
from core.memory.search import score
from core.memory.store import MemoryStore, Row

_COLUMNS = "e.id, e.request, e.plan, e.gaps, e.actions, e.outcome, e.duration_ms, e.at"
MAX_FIELD_CHARS = 2_000  # each of request, plan, outcome; longer is cut
MAX_LIST = 30  # gaps and actions kept per experience


def _lines(raw: str) -> tuple[str, ...]:
    return tuple(line for line in raw.split("\n") if line)


def _experience(row: Row) -> Experience:
    xid, request, plan, gaps, actions, outcome, duration_ms, at = row
    return Experience(
        xid,
        request,
        _lines(plan),
        tuple(json.loads(gaps)),
        tuple(json.loads(actions)),
        outcome,
        duration_ms,
        at,
    )


class Experiences:
    """The memory_experiences table and its index."""

    def __init__(self, store: MemoryStore) -> None:
        self._store = store

    async def record(
        self,
        request: str,
        plan: Sequence[str],
        gaps: Sequence[str],
        actions: Sequence[str],
        outcome: str,
        duration_ms: float,
        at: float,
    ) -> Experience:
        """Keep one experience (texts already redacted); the record."""
        plan_text = "\n".join(p for p in plan if p)[:MAX_FIELD_CHARS]
        row = (
            new_id("x"), request[:MAX_FIELD_CHARS], plan_text,
            json.dumps(list(gaps)[:MAX_LIST]), json.dumps(list(actions)[:MAX_LIST]),
            outcome[:MAX_FIELD_CHARS], float(duration_ms), at,
        )  # fmt: skip
        await self._store.write(
            "INSERT INTO memory_experiences (id, request, plan, gaps, actions, outcome,"
            " duration_ms, at, last_used_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (*row, at),
        )
        return _experience(row)

    async def similar(
        self, expression: str, limit: int, now: float
    ) -> list[tuple[Experience, float]]:
        """Experiences matching an FTS5 expression, best first, with their score."""
        rows = await self._store.read(
            f"SELECT hits.rank, e.last_used_at, {_COLUMNS} FROM memory_experiences AS e"
            " JOIN (SELECT rowid, rank FROM memory_experiences_fts"
            " WHERE memory_experiences_fts MATCH ? ORDER BY rank LIMIT ?) AS hits"
            " ON e.n = hits.rowid",
            (expression, max(1, limit) * 4),
        )
        ranked = sorted(
            ((_experience(row[2:]), score(row[0], row[1], now)) for row in rows),
            key=lambda pair: pair[1],
            reverse=True,
        )
        return ranked[: max(0, limit)]

    async def touch(self, ids: Iterable[str], at: float) -> None:
        """Mark experiences as used now."""
        wanted = list(ids)
        if wanted:
            marks = ", ".join("?" for _ in wanted)
            await self._store.write(
                f"UPDATE memory_experiences SET last_used_at = ? WHERE id IN ({marks})",
                (at, *wanted),
            )

    async def count(self) -> int:
        """How many experiences are kept."""
        row = await self._store.read_one("SELECT COUNT(*) FROM memory_experiences")
        return int(row[0]) if row else 0
