"""The read side of the ledger: pages and lookups on a connection of their own, so the web
page never waits behind a write batch or sees uncommitted rows."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import cast

import aiosqlite

from core.receipts.base import ReceiptPage, ReceiptQuery, Story, StoryPage
from core.receipts.chain import Row
from core.receipts.fts import fts_expression
from core.receipts.kinds import Role
from core.receipts.model import GENESIS_HASH, StoredReceipt
from core.receipts.query import (
    by_ids_sql,
    by_seqs_sql,
    filters,
    members_sql,
    page_sql,
    passing_range_sql,
    passing_sql,
    roots_sql,
    undos_sql,
)
from core.receipts.registry import KINDS
from core.receipts.schema import COLUMNS
from core.receipts.search import SearchIndex
from core.storage.connections import open_reader

# A plain search reads one hit more than its page. A filtered one reads hits in chunks that
# grow (500, 2,000, 8,000, ...), so it needs few trips, and a rare filter stops after
# SEARCH_MAX_SCAN hits with a cursor to go on from (about 30 ms of work).
SEARCH_CHUNK = 500
SEARCH_GROWTH = 4
SEARCH_MAX_SCAN = 20_000

# The story page looks for roots among this many receipts at a time (a long quest holds no
# root: the page ends short, with a cursor to go on from), and shows this many of each quest.
STORY_SCAN = 20_000
MEMBERS_SHOWN = 30
# Where a receipt names the change it made (an Undo names it as its `change` input).
CHANGE_NAMED_BY = (("inputs", "dry_run"), ("outputs", "change"))

# Distinct action types by hopping through the index: cheap at any ledger size.
ACTION_TYPES_SQL = """
WITH RECURSIVE t(v) AS (
    SELECT (SELECT min(action_type) FROM receipts)
    UNION ALL
    SELECT (SELECT min(action_type) FROM receipts WHERE action_type > v) FROM t WHERE v IS NOT NULL
)
SELECT v FROM t WHERE v IS NOT NULL
"""


class LedgerReader:
    """Queries over committed receipts."""

    def __init__(self, path: Path, search: SearchIndex) -> None:
        self._path = path
        self._search = search
        self._db: aiosqlite.Connection | None = None

    async def open(self) -> None:
        """Open the read connection (the writer has created the schema)."""
        self._db = await open_reader(self._path)

    async def close(self) -> None:
        """Close the read connection."""
        if self._db is not None:
            await self._db.close()
            self._db = None

    def _conn(self) -> aiosqlite.Connection:
        if self._db is None:
            raise sqlite3.OperationalError("the receipt ledger is not open")
        return self._db

    async def fetch(self, sql: str, params: Sequence[object] = ()) -> list[StoredReceipt]:
        """Rows of `SELECT {COLUMNS} ...` as StoredReceipts."""
        return [StoredReceipt(*row) for row in await self.rows(sql, params)]

    async def rows(self, sql: str, params: Sequence[object] = ()) -> list[Row]:
        """Rows of a query as plain tuples."""
        async with self._conn().execute(sql, params) as cur:
            # No row factory: sqlite3 gives plain tuples.
            return cast(list[Row], list(await cur.fetchall()))

    async def scalar(self, sql: str, params: Sequence[object] = ()) -> object:
        """The first column of the first row (None if no row)."""
        async with self._conn().execute(sql, params) as cur:
            row = await cur.fetchone()
        return row[0] if row else None

    async def rows_by_ids(self, ids: Sequence[str]) -> list[Row]:
        """The stored rows of the receipts with these ids (those that exist), in no order."""
        return await self.rows(by_ids_sql(COLUMNS), [json.dumps(list(ids))])

    async def get(self, receipt_id: str) -> StoredReceipt | None:
        """One receipt by id."""
        rows = await self.fetch(f"SELECT {COLUMNS} FROM receipts WHERE id = ?", (receipt_id,))
        return rows[0] if rows else None

    async def children(self, receipt_id: str, limit: int = 100) -> list[StoredReceipt]:
        """Receipts whose parent is `receipt_id`, oldest first."""
        sql = f"SELECT {COLUMNS} FROM receipts WHERE parent_id = ? ORDER BY seq LIMIT ?"
        return await self.fetch(sql, (receipt_id, limit))

    async def count(self) -> int:
        """How many receipts are committed (the last seq: receipts are never removed)."""
        return int(str(await self.scalar("SELECT max(seq) FROM receipts") or 0))

    async def head(self) -> tuple[int, str]:
        """(seq, hash) of the last committed receipt; (0, the genesis hash) when empty."""
        rows = await self.rows("SELECT seq, hash FROM receipts ORDER BY seq DESC LIMIT 1")
        return (int(rows[0][0]), str(rows[0][1])) if rows else (0, GENESIS_HASH)

    async def action_types(self) -> list[str]:
        """Distinct action types."""
        async with self._conn().execute(ACTION_TYPES_SQL) as cur:
            return [str(row[0]) for row in await cur.fetchall()]

    async def page(self, query: ReceiptQuery) -> ReceiptPage:
        """A newest-first page; `next_before_seq` continues it."""
        expression = fts_expression(query.text) if query.text else None
        if expression is not None:
            return await self._text_page(query, expression)
        sql, params = page_sql(query, COLUMNS)
        rows = await self.fetch(sql, params)
        more = len(rows) > query.limit
        rows = rows[: query.limit]
        return ReceiptPage(tuple(rows), rows[-1].seq if more and rows else None)

    async def _text_page(self, query: ReceiptQuery, expression: str) -> ReceiptPage:
        """Walk full-text hits newest first, keeping those that pass the filters; read the
        receipts of the page only.

        Bounded: after SEARCH_MAX_SCAN hits a short page is returned with a cursor that
        continues the walk, so a rare filter cannot make one request scan the whole index.
        """
        where, _ = filters(query)
        wanted = query.limit + 1
        matched: list[int] = []
        before, chunk, scanned = query.before_seq, SEARCH_CHUNK if where else wanted, 0
        while len(matched) < wanted:
            seqs = await self._search.hits(expression, before, chunk)
            matched += await self._passing(query, seqs) if where else seqs
            if len(seqs) < chunk:
                break
            before, scanned = seqs[-1], scanned + len(seqs)
            if scanned >= SEARCH_MAX_SCAN and len(matched) < wanted:
                return ReceiptPage(tuple(await self._by_seqs(matched)), before)
            chunk = min(chunk * SEARCH_GROWTH, SEARCH_MAX_SCAN - scanned)
        shown = matched[: query.limit]
        more = len(matched) > query.limit
        return ReceiptPage(tuple(await self._by_seqs(shown)), shown[-1] if more else None)

    async def stories(self, before_seq: int | None, limit: int) -> StoryPage:
        """Newest-first requests (receipts with no parent and no quest, presses aside), each
        with the first receipts of its quest."""
        high = before_seq - 1 if before_seq is not None else await self.count()
        low = max(1, high - STORY_SCAN + 1)
        roots = await self.fetch(roots_sql(COLUMNS), (low, high, limit + 1))
        cursor = roots[limit].seq + 1 if len(roots) > limit else (low if low > 1 else None)
        roots = roots[:limit]
        ids = json.dumps([root.id for root in roots])
        members: dict[str, list[StoredReceipt]] = {}
        sizes: dict[str, int] = {}
        for row in await self.rows(members_sql(COLUMNS), (ids, MEMBERS_SHOWN)):
            receipt = StoredReceipt(*row[:17])
            members.setdefault(str(receipt.quest_id), []).append(receipt)
            sizes[str(receipt.quest_id)] = int(row[17])
        stories = tuple(
            Story(root, tuple(members.get(root.id, ())), sizes.get(root.id, 0)) for root in roots
        )
        return StoryPage(await self._with_undos(stories), cursor)

    async def _with_undos(self, stories: tuple[Story, ...]) -> tuple[Story, ...]:
        """Each story with the undos (done or refused) of the changes it made. An undo's
        parent is the press of an Undo button, later and in no quest; it names the change,
        which the request's dry run (or its tool run) named."""
        made = {story.root.id: changes_made(story.members) for story in stories}
        wanted = sorted(set().union(*made.values()))
        if not wanted:
            return stories
        kinds = json.dumps(KINDS.having(Role.UNDO))
        undos = [
            (undo, _key(undo.decoded("inputs"), "change"))
            for undo in await self.fetch(undos_sql(COLUMNS), (kinds, json.dumps(wanted)))
        ]
        linked = []
        for story in stories:
            own = [undo for undo, change in undos if change in made[story.root.id]]
            if own:
                members = tuple(sorted((*story.members, *own), key=lambda r: r.seq))
                story = Story(story.root, members, story.size + len(own))
            linked.append(story)
        return tuple(linked)

    async def count_matching(self, text: str, cap: int) -> int:
        """How many receipts contain the words of `text`, up to `cap` + 1."""
        expression = fts_expression(text)
        return await self._search.count(expression, cap) if expression else 0

    async def _passing(self, query: ReceiptQuery, seqs: list[int]) -> list[int]:
        """The seqs (newest first) whose receipts pass the query's filters."""
        if not seqs:
            return []
        _, params = filters(query)
        # A selective filter has fewer receipts in the hits' span than there are hits: read
        # them all from its index (cheap). Otherwise look each hit up.
        span = [*params, seqs[-1], seqs[0], len(seqs)]
        rows = await self.rows(passing_range_sql(query), span)
        if len(rows) >= len(seqs):
            rows = await self.rows(passing_sql(query), [json.dumps(seqs), *params])
        passing = {row[0] for row in rows}
        return [seq for seq in seqs if seq in passing]

    async def _by_seqs(self, seqs: list[int]) -> list[StoredReceipt]:
        return await self.fetch(by_seqs_sql(COLUMNS), [json.dumps(seqs)]) if seqs else []


def changes_made(members: Sequence[StoredReceipt]) -> set[str]:
    """The ids of the changes these receipts made, which Undo names: a dry run's id (its
    `dry_run` input, applied after it) or a change applied at once (a tool run's `change`
    output). Parsed only where the key is in the text: most receipts name none."""
    found: set[str] = set()
    for member in members:
        for column, key in CHANGE_NAMED_BY:
            if f'"{key}"' in getattr(member, column):
                value = _key(member.decoded(column), key)
                if isinstance(value, str):
                    found.add(value)
    return found


def _key(value: object, key: str) -> object:
    return value.get(key) if isinstance(value, dict) else None
