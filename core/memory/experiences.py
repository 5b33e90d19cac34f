"""Task experiences: what the agent did for a request and how it went, found again by
requests that read alike (FTS5, weighed by recency)."""

from __future__ import annotations

import heapq
import json
from collections.abc import Sequence

from core.memory.commits import new_id
from core.memory.model import Experience
from core.memory.ranking import EXPERIENCES, ranked
from core.memory.search import score, words
from core.memory.store import MemoryStore, Query, Row

_COLUMNS = "e.id, e.request, e.plan, e.gaps, e.actions, e.outcome, e.duration_ms, e.at"
MAX_FIELD_CHARS = 2_000  # each of request, plan, outcome; longer is cut
MAX_LIST = 30  # gaps and actions kept per experience
CANDIDATES = 4  # ranked by relevance, then weighed by recency


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


def search_query(terms: Sequence[str], limit: int) -> Query:
    """The experiences that best match any of `terms`, each led by its relevance and when it
    was last used."""
    with_ranked, params = ranked(EXPERIENCES, terms, max(1, limit) * CANDIDATES)
    return Query(
        f"{with_ranked}SELECT r.relevance, max(e.at, ifnull(u.at, 0)), {_COLUMNS}"
        " FROM ranked AS r JOIN memory_experiences AS e ON e.n = r.id"
        " LEFT JOIN memory_used AS u ON u.id = e.id",
        params,
    )


def parse_search(rows: Sequence[Row], limit: int, now: float) -> list[tuple[Experience, float]]:
    """The best `limit` of a search_query's rows with their score, best first."""
    weighed = ((score(row[0], row[1], now), row) for row in rows)
    best = heapq.nlargest(max(0, limit), weighed, key=_first)
    return [(_experience(row[2:]), weight) for weight, row in best]


def _first(pair: tuple[float, Row]) -> float:
    return pair[0]


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
            " duration_ms, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            row,
        )
        return _experience(row)

    async def similar(self, text: str, limit: int, now: float) -> list[tuple[Experience, float]]:
        """Experiences matching any meaningful word of `text`, best first, with their score."""
        terms = words(text)
        if not terms:
            return []
        query = search_query(terms, limit)
        return parse_search(await self._store.read(query.sql, query.params), limit, now)

    async def count(self) -> int:
        """How many experiences are kept."""
        row = await self._store.read_one("SELECT COUNT(*) FROM memory_experiences")
        return int(row[0]) if row else 0
