"""Reading remembered items (core blocks, episodic and archival facts): by id, by block, by
search ranked on relevance and recency. Items are written only by commits (commits.py)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from core.memory.blocks import Block
from core.memory.model import Item, Provenance, Tier
from core.memory.search import score
from core.memory.store import MemoryStore, Row

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
    "last_used_at",
    "version",
    "commit_id",
)
_SELECT = "SELECT " + ", ".join(f"i.{c}" for c in COLUMNS) + " FROM memory_items AS i"
CANDIDATES = 4  # search ranks this many times `limit` by bm25, then weighs recency


def snapshot(row: Row) -> dict[str, Any]:
    """A row (COLUMNS order) as the dict a commit keeps of it."""
    return dict(zip(COLUMNS, row, strict=True))


def item_of(row: Row | dict[str, Any]) -> Item:
    """A row (COLUMNS order, or its snapshot) as an Item."""
    r = row if isinstance(row, dict) else snapshot(row)
    return Item(
        id=r["id"],
        tier=Tier(r["tier"]),
        text=r["text"],
        provenance=Provenance(r["provenance"]),
        created_at=r["created_at"],
        updated_at=r["updated_at"],
        version=r["version"],
        commit_id=r["commit_id"],
        block=r["block"],
        chat=r["chat"],
        source=r["source"],
    )


class Items:
    """Queries over memory_items and its full-text index."""

    def __init__(self, store: MemoryStore) -> None:
        self._store = store

    async def get(self, item_id: str) -> Item | None:
        """One item by id."""
        row = await self._store.read_one(f"{_SELECT} WHERE i.id = ?", (item_id,))
        return item_of(row) if row else None

    async def blocks(self) -> dict[Block, Item]:
        """The core blocks that have text, in Block order."""
        rows = await self._store.read(f"{_SELECT} WHERE i.tier = 'core'")
        found = {Block(item.block): item for item in map(item_of, rows) if item.block}
        return {block: found[block] for block in Block if block in found}

    async def episodic(self, chat: str, conversation: int) -> list[tuple[Item, float]]:
        """The facts of one conversation, with when each was last used, newest first."""
        rows = await self._store.read(
            f"{_SELECT} WHERE i.tier = 'episodic' AND i.chat = ? AND i.conversation = ?"
            " ORDER BY i.updated_at DESC LIMIT 100",
            (chat, conversation),
        )
        return [(item_of(row), row[10]) for row in rows]

    async def search(
        self, expression: str, limit: int, now: float, tiers: Iterable[Tier] = (Tier.ARCHIVAL,)
    ) -> list[tuple[Item, float]]:
        """Items of `tiers` matching an FTS5 expression, best first, with their score
        (search.score: bm25 weighed by how recently each was used)."""
        wanted = tuple(t.value for t in tiers)
        marks = ", ".join("?" for _ in wanted)
        rows = await self._store.read(
            f"{_SELECT.replace('SELECT ', 'SELECT hits.rank, ', 1)}"
            " JOIN (SELECT rowid, rank FROM memory_items_fts WHERE memory_items_fts MATCH ?"
            " ORDER BY rank LIMIT ?) AS hits ON i.n = hits.rowid"
            f" WHERE i.tier IN ({marks})",
            (expression, max(1, limit) * CANDIDATES, *wanted),
        )
        ranked = sorted(
            ((item_of(row[1:]), score(row[0], row[11], now)) for row in rows),
            key=lambda pair: pair[1],
            reverse=True,
        )
        return ranked[: max(0, limit)]

    async def count(self) -> dict[Tier, int]:
        """How many items each tier holds."""
        rows = await self._store.read("SELECT tier, COUNT(*) FROM memory_items GROUP BY tier")
        counts = {tier: 0 for tier in Tier}
        counts.update({Tier(tier): n for tier, n in rows})
        return counts

    async def touch(self, item_ids: Iterable[str], at: float) -> None:
        """Mark items as used now (the context took them): least recently used go first."""
        ids = list(item_ids)
        if ids:
            marks = ", ".join("?" for _ in ids)
            await self._store.write(
                f"UPDATE memory_items SET last_used_at = ? WHERE id IN ({marks})", (at, *ids)
            )
