"""Commit-based edits: staged changes applied in one transaction that keeps a snapshot of every
row it touched, so any commit can be undone while no later commit changed the same items.
Each commit leaves a memory_edit_committed receipt (ids and sizes, never the texts)."""

from __future__ import annotations

import json
import secrets
from dataclasses import asdict, dataclass
from typing import Any

from core.memory.items import COLUMNS, item_of, snapshot
from core.memory.model import Change, Commit, MemoryRefused, Op, Provenance, Tier, UndoRefused
from core.memory.store import MemoryStore, Row, Writer
from core.receipts.base import ReceiptStore
from core.receipts.model import Receipt

COMMITTED = "memory_edit_committed"
_ITEM = "SELECT " + ", ".join(COLUMNS) + " FROM memory_items"
_INSERT = (
    f"INSERT INTO memory_items ({', '.join(COLUMNS)}) VALUES ({', '.join('?' for _ in COLUMNS)})"
)
_COMMIT = (
    "SELECT n, id, at, provenance, reason, undo_of, undone_by, quarantine_id FROM memory_commits"
)


def new_id(prefix: str) -> str:
    """An id no one can guess: the prefix and 96 random bits."""
    return prefix + secrets.token_hex(12)


@dataclass(frozen=True, slots=True)
class Staged:
    """One change waiting for finish(): its text is already redacted and checked."""

    op: Op
    item_id: str
    tier: Tier
    text: str = ""
    block: str | None = None
    chat: str | None = None
    conversation: int | None = None
    source: str | None = None

    def as_change(self) -> Change:
        """The change as the owner's card shows it."""
        return Change(self.op, self.item_id, self.tier, self.text, self.block)

    @staticmethod
    def load(raw: str) -> tuple[Staged, ...]:
        """Staged changes saved as JSON (a quarantined edit's)."""
        return tuple(
            Staged(**{**d, "op": Op(d["op"]), "tier": Tier(d["tier"])}) for d in json.loads(raw)
        )

    @staticmethod
    def dump(ops: tuple[Staged, ...]) -> str:
        """Staged changes as JSON."""
        return json.dumps([asdict(op) for op in ops])


class Commits:
    """The memory_commits and memory_changes tables, and the only writer of memory_items."""

    def __init__(self, store: MemoryStore, receipts: ReceiptStore) -> None:
        self._store = store
        self._receipts = receipts

    async def apply(
        self,
        w: Writer,
        ops: tuple[Staged, ...],
        provenance: Provenance,
        reason: str,
        at: float,
        *,
        quarantine_id: str | None = None,
    ) -> Commit:
        """Apply staged changes inside the caller's transaction and record the commit; the
        caller announces it once the transaction has committed."""
        commit_id = new_id("c")
        pairs = [await self._apply_one(w, op, provenance, at, commit_id) for op in ops]
        return await self._record(w, commit_id, provenance, reason, at, pairs, None, quarantine_id)

    async def _apply_one(
        self, w: Writer, op: Staged, provenance: Provenance, at: float, commit_id: str
    ) -> tuple[Row | None, Row | None]:
        before = await self._current(w, op)
        if op.op is Op.INSERT or (op.op is Op.RETHINK and before is None):
            after: Row | None = (
                op.item_id, op.tier.value, op.block, op.chat, op.conversation, op.text,
                provenance.value, op.source, at, at, 1, commit_id,
            )  # fmt: skip
        elif before is None:
            raise MemoryRefused(f"there is no memory item {op.item_id}")
        elif op.op is Op.DELETE:
            after = None
        else:
            row = snapshot(before) | {"text": op.text, "provenance": provenance.value}
            row |= {"updated_at": at, "version": row["version"] + 1, "commit_id": commit_id}
            after = tuple(row[c] for c in COLUMNS)
        await _write_row(w, before, after)
        return before, after

    async def _current(self, w: Writer, op: Staged) -> Row | None:
        if op.op is Op.RETHINK:
            return await w.fetch_one(f"{_ITEM} WHERE block = ?", (op.block,))
        return await w.fetch_one(f"{_ITEM} WHERE id = ?", (op.item_id,))

    async def undo(self, commit_id: str, provenance: Provenance, at: float) -> Commit:
        """Restore what commit `commit_id` changed, as a new commit; UndoRefused when it was
        undone already or a later commit changed one of its items."""
        async with self._store.transaction() as w:
            head = await w.fetch_one(f"{_COMMIT} WHERE id = ?", (commit_id,))
            if head is None:
                raise MemoryRefused(f"there is no memory commit {commit_id}")
            if head[6]:
                raise UndoRefused(f"commit {commit_id} was already undone by {head[6]}")
            changes = await w.fetch(
                "SELECT item_id, before, after FROM memory_changes"
                " WHERE commit_n = ? ORDER BY pos DESC",
                (head[0],),
            )
            undo_id = new_id("c")
            pairs = []
            for item_id, before, after in changes:
                current = await w.fetch_one(f"{_ITEM} WHERE id = ?", (item_id,))
                await _check_unchanged(w, (commit_id, undo_id), item_id, after, current)
                prior = json.loads(before) if before else None
                if prior and prior["block"] and current is None:
                    await _check_block_free(w, commit_id, prior["block"])
                restored = _restored(prior, current, at, undo_id)
                await _write_row(w, current, restored)
                pairs.append((current, restored))
            commit = await self._record(w, undo_id, provenance, f"undo {commit_id}", at, pairs,
                                        commit_id, None)  # fmt: skip
            await w.execute(
                "UPDATE memory_commits SET undone_by = ? WHERE id = ?", (undo_id, commit_id)
            )
        self.announce(commit)
        return commit

    async def _record(
        self,
        w: Writer,
        commit_id: str,
        provenance: Provenance,
        reason: str,
        at: float,
        pairs: list[tuple[Row | None, Row | None]],
        undo_of: str | None,
        quarantine_id: str | None,
    ) -> Commit:
        n = await w.insert(
            "INSERT INTO memory_commits (id, at, provenance, reason, undo_of, quarantine_id)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (commit_id, at, provenance.value, reason, undo_of, quarantine_id),
        )
        await w.executemany(
            "INSERT INTO memory_changes (commit_n, pos, op, item_id, before, after)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            [(n, pos, _op(b, a).value, (a or b or ("",))[0], _json(b), _json(a))
             for pos, (b, a) in enumerate(pairs)],
        )  # fmt: skip
        changes = tuple(_change(b, a) for b, a in pairs)
        return Commit(commit_id, at, provenance, reason, changes, undo_of, None, quarantine_id)

    def announce(self, commit: Commit) -> None:
        """Leave the commit's receipt (once its transaction has committed)."""
        self._receipts.append(_receipt(commit))

    async def get(self, commit_id: str) -> Commit | None:
        """One commit with its changes."""
        rows = await self._store.read(f"{_COMMIT} WHERE id = ?", (commit_id,))
        found = await self._with_changes(rows)
        return found[0] if found else None

    async def recent(self, limit: int = 10) -> list[Commit]:
        """The newest commits first."""
        rows = await self._store.read(f"{_COMMIT} ORDER BY n DESC LIMIT ?", (max(0, limit),))
        return await self._with_changes(rows)

    async def _with_changes(self, heads: list[Row]) -> list[Commit]:
        if not heads:
            return []
        marks = ", ".join("?" for _ in heads)
        rows = await self._store.read(
            f"SELECT commit_n, before, after FROM memory_changes WHERE commit_n IN ({marks})"
            " ORDER BY commit_n, pos",
            [h[0] for h in heads],
        )
        changes: dict[int, list[Change]] = {}
        for n, before, after in rows:
            b, a = (json.loads(before) if before else None), (json.loads(after) if after else None)
            changes.setdefault(n, []).append(_change(b, a))
        return [
            Commit(cid, at, Provenance(prov), reason, tuple(changes.get(n, ())), undo_of, by, qid)
            for n, cid, at, prov, reason, undo_of, by, qid in heads
        ]


async def _write_row(w: Writer, before: Row | dict[str, Any] | None, after: Row | None) -> None:
    """Make the stored row `after` (None: gone), where it was `before`."""
    if before is not None and after is None:
        old_id = before["id"] if isinstance(before, dict) else before[0]
        await w.execute("DELETE FROM memory_items WHERE id = ?", (old_id,))
    elif before is None and after is not None:
        await w.execute(_INSERT, after)
    elif after is not None:
        sets = ", ".join(f"{c} = ?" for c in COLUMNS[1:])
        await w.execute(f"UPDATE memory_items SET {sets} WHERE id = ?", (*after[1:], after[0]))


def _restored(
    before: dict[str, Any] | None, current: Row | None, at: float, undo_id: str
) -> Row | None:
    """The row as it was before a commit, written again by the undo commit `undo_id`."""
    if before is None:
        return None
    version = max(before["version"], snapshot(current)["version"] if current else 0) + 1
    row = before | {"updated_at": at, "version": version, "commit_id": undo_id}
    return tuple(row[c] for c in COLUMNS)


async def _check_unchanged(
    w: Writer, ours: tuple[str, str], item_id: str, after: str | None, current: Row | None
) -> None:
    """UndoRefused unless the item is as commit ours[0] left it (or as its undo, ours[1],
    has already restored it: a commit may change one item twice)."""
    if (current is None) == (after is None) and (current is None or current[-1] in ours):
        return
    later = current[-1] if current else await _last_commit_of(w, item_id)
    raise UndoRefused(
        f"commit {later} changed item {item_id} after commit {ours[0]}: undo {later} first"
    )


async def _check_block_free(w: Writer, commit_id: str, block: str) -> None:
    """UndoRefused when the block a commit deleted has been written again since."""
    row = await w.fetch_one("SELECT commit_id FROM memory_items WHERE block = ?", (block,))
    if row:
        raise UndoRefused(
            f"commit {row[0]} wrote the {block} block after commit {commit_id}: undo it first"
        )


async def _last_commit_of(w: Writer, item_id: str) -> str:
    row = await w.fetch_one(
        "SELECT c.id FROM memory_changes AS ch JOIN memory_commits AS c ON c.n = ch.commit_n"
        " WHERE ch.item_id = ? ORDER BY c.n DESC LIMIT 1",
        (item_id,),
    )
    return str(row[0]) if row else "?"


def _op(before: object | None, after: object | None) -> Op:
    return Op.INSERT if before is None else Op.DELETE if after is None else Op.UPDATE


def _json(row: Row | None) -> str | None:
    return None if row is None else json.dumps(snapshot(row))


def _change(before: Row | dict[str, Any] | None, after: Row | dict[str, Any] | None) -> Change:
    shown = after if after is not None else before
    if shown is None:
        raise ValueError("a change needs a row before or after it")
    item = item_of(shown)
    return Change(_op(before, after), item.id, item.tier, item.text, item.block)


def _receipt(commit: Commit) -> Receipt:
    changes = [
        {"op": c.op.value, "item_id": c.item_id, "tier": c.tier.value, "block": c.block,
         "chars": len(c.text)}
        for c in commit.changes
    ]  # fmt: skip
    return Receipt(
        COMMITTED,
        commit.reason,
        inputs={"commit_id": commit.id, "provenance": commit.provenance.value, "changes": changes},
        outputs={"undo_of": commit.undo_of, "quarantine_id": commit.quarantine_id},
        metadata={"commit_id": commit.id},
    )
