"""Reading remembered items (core blocks, episodic and archival facts): by id, by block, by
search ranked on relevance and recency. Items are written only by commits (commits.py).

Each read is a Query and a parser, so the context can make several in one trip."""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence
from typing import Any

from core.memory.blocks import Block
from core.memory.model import Item, Provenance, Tier
from core.memory.ranking import ITEMS, ranked
from core.memory.search import score, words
from core.memory.store import MemoryStore, Query, Row

COLUMNS = (
    "id",
    "tier",
    "block",
    "chat",
    "conversation",
    "text",
    "provenance",
    "source",
    "created_at",
    "updated_at",
    "version",
    "commit_id",
)
_SELECT = "SELECT " + ", ".join(f"i.{c}" for c in COLUMNS) + " FROM memory_items AS i"
CANDIDATES = 2  # search takes this many times `limit` by relevance, then weighs recency
_TIERS = {tier.value: tier for tier in Tier}
_PROVENANCES = {p.value: p for p in Provenance}


def snapshot(row: Row) -> dict[str, Any]:
    """A row (COLUMNS order) as the dict a commit keeps of it."""
    return dict(zip(COLUMNS, row, strict=True))


def item_of(row: Row | dict[str, Any]) -> Item:
    """A row (COLUMNS order, or its snapshot) as an Item."""
    if isinstance(row, dict):
        row = tuple(row[c] for c in COLUMNS)
    item_id, tier, block, chat, _, text, provenance, source, created, updated, version, cid = row
    return Item(
        id=item_id,
        tier=_TIERS[tier],
        text=text,
        provenance=_PROVENANCES[provenance],
        created_at=created,
        updated_at=updated,
        version=version,
        commit_id=cid,
        block=block,
        chat=chat,
        source=source,
    )


def blocks_query() -> Query:
    """The core blocks' rows."""
    return Query(f"{_SELECT} WHERE i.tier = 'core'")


def parse_blocks(rows: Sequence[Row]) -> dict[Block, Item]:
    """The core blocks that have text, in Block order."""
    found = {Block(item.block): item for item in map(item_of, rows) if item.block}
    return {block: found[block] for block in Block if block in found}


def episodic_query(chat: str, conversation: int) -> Query:
    """The facts of one conversation, newest first."""
    return Query(
        f"{_SELECT} WHERE i.tier = 'episodic' AND i.chat = ? AND i.conversation = ?"
        " ORDER BY i.updated_at DESC LIMIT 100",
        (chat, conversation),
    )


def search_query(terms: Sequence[str], limit: int, tiers: Iterable[Tier]) -> Query:
    """The rows of `tiers` that best match any of `terms` (ranking.py), each led by its
    relevance and when it was last used (written, or taken into a context)."""
    with_ranked, params = ranked(ITEMS, terms, max(1, limit) * CANDIDATES)
    wanted = tuple(t.value for t in tiers)
    return Query(
        f"{with_ranked}SELECT r.relevance, max(i.updated_at, ifnull(u.at, 0)), "
        + ", ".join(f"i.{c}" for c in COLUMNS)
        + " FROM ranked AS r JOIN memory_items AS i ON i.n = r.id"
        " LEFT JOIN memory_used AS u ON u.id = i.id"
        # "+": rows found by n; an index on tier would read every archival row.
        f" WHERE +i.tier IN ({', '.join('?' for _ in wanted)})",
        [*params, *wanted],
    )


def parse_search(rows: Sequence[Row], limit: int, now: float) -> list[tuple[Item, float]]:
    """The best `limit` of a search_query's rows with their score (search.score: relevance
    weighed by how recently each was used), best first."""
    weighed = ((score(row[0], row[1], now), row) for row in rows)
    best = heapq.nlargest(max(0, limit), weighed, key=_first)
    return [(item_of(row[2:]), weight) for weight, row in best]


def _first(pair: tuple[float, Row]) -> float:
    return pair[0]


class Items:
    """Queries over memory_items, its full-text index and memory_used."""

    def __init__(self, store: MemoryStore) -> None:
        self._store = store

    async def get(self, item_id: str) -> Item | None:
        """One item by id."""
        row = await self._store.read_one(f"{_SELECT} WHERE i.id = ?", (item_id,))
        return item_of(row) if row else None

    async def blocks(self) -> dict[Block, Item]:
        """The core blocks that have text, in Block order."""
        return parse_blocks(await self._store.read(blocks_query().sql))

    async def search(
        self, text: str, limit: int, now: float, tiers: Iterable[Tier] = (Tier.ARCHIVAL,)
    ) -> list[tuple[Item, float]]:
        """Items of `tiers` matching any meaningful word of `text`, best first, with their
        score."""
        terms = words(text)
        if not terms:
            return []
        query = search_query(terms, limit, tiers)
        return parse_search(await self._store.read(query.sql, query.params), limit, now)

    async def count(self) -> dict[Tier, int]:
        """How many items each tier holds."""
        rows = await self._store.read("SELECT tier, COUNT(*) FROM memory_items GROUP BY tier")
        counts = {tier: 0 for tier in Tier}
        counts.update({Tier(tier): n for tier, n in rows})
        return counts

    def touch(self, ids: Iterable[str], at: float) -> None:
        """Mark items or experiences as used now (a context took them): of those that match a
        request, the least recently used are the first left out. Written with the next write
        (the turn that follows), not at the cost of a commit of its own."""
        used = list(dict.fromkeys(ids))
        if used:
            self._store.later(
                "INSERT INTO memory_used (id, at) VALUES "
                + ", ".join("(?, ?)" for _ in used)
                + " ON CONFLICT(id) DO UPDATE SET at = excluded.at",
                [value for item_id in used for value in (item_id, at)],
            )
