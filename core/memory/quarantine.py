"""Edits held for the owner: kept whole with the exact texts they would write, applied as one
commit on Approve, dropped on Reject, and never in the context meanwhile."""

from __future__ import annotations

import secrets

from core.memory.commits import Commits, Staged
from core.memory.model import Commit, MemoryRefused, Provenance, Quarantined, QuarantinedEdit
from core.memory.store import MemoryStore, Row
from core.receipts.base import ReceiptStore
from core.receipts.model import Receipt, ReceiptStatus

QUARANTINED = "memory_edit_quarantined"
REJECTED = "memory_edit_rejected"
_ROW = "SELECT id, at, provenance, reason, why, ops FROM memory_quarantine"


def quarantine_id() -> str:
    """An id to put in a signed button: 128 random bits, so knowing one says nothing of another."""
    return "q" + secrets.token_urlsafe(16)


def _edit(row: Row) -> QuarantinedEdit:
    qid, at, provenance, reason, why, ops = row
    changes = tuple(op.as_change() for op in Staged.load(ops))
    return QuarantinedEdit(qid, at, Provenance(provenance), reason, why, changes)


class Quarantine:
    """The memory_quarantine table."""

    def __init__(self, store: MemoryStore, commits: Commits, receipts: ReceiptStore) -> None:
        self._store = store
        self._commits = commits
        self._receipts = receipts

    async def hold(
        self, ops: tuple[Staged, ...], provenance: Provenance, reason: str, why: str, at: float
    ) -> Quarantined:
        """Keep an edit for the owner's decision."""
        qid = quarantine_id()
        await self._store.write(
            "INSERT INTO memory_quarantine (id, at, provenance, reason, why, ops)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (qid, at, provenance.value, reason, why, Staged.dump(ops)),
        )
        self._receipts.append(
            Receipt(
                QUARANTINED,
                reason,
                inputs={"quarantine_id": qid, "provenance": provenance.value, "why": why},
                outputs={"changes": [{"op": o.op.value, "tier": o.tier.value} for o in ops]},
                status=ReceiptStatus.PENDING,
            )
        )
        return Quarantined(qid, why)

    async def pending(self, limit: int = 20) -> list[QuarantinedEdit]:
        """Held edits, oldest first."""
        rows = await self._store.read(
            f"{_ROW} WHERE state = 'pending' ORDER BY n LIMIT ?", (max(0, limit),)
        )
        return [_edit(row) for row in rows]

    async def get(self, qid: str) -> QuarantinedEdit | None:
        """One held edit (pending only)."""
        row = await self._store.read_one(f"{_ROW} WHERE id = ? AND state = 'pending'", (qid,))
        return _edit(row) if row else None

    async def count(self) -> int:
        """How many edits wait."""
        row = await self._store.read_one(
            "SELECT COUNT(*) FROM memory_quarantine WHERE state = 'pending'"
        )
        return int(row[0]) if row else 0

    async def approve(self, qid: str, at: float) -> Commit:
        """Apply a held edit as one commit (its provenance kept); MemoryRefused when it is
        not waiting (decided already, or never held) or no longer applies."""
        async with self._store.transaction() as w:
            row = await w.fetch_one(f"{_ROW} WHERE id = ? AND state = 'pending'", (qid,))
            if row is None:
                raise MemoryRefused("that memory edit is not waiting for a decision")
            ops = Staged.load(row[5])
            commit = await self._commits.apply(
                w, ops, Provenance(row[2]), row[3], at, quarantine_id=qid
            )
            await w.execute(
                "UPDATE memory_quarantine SET state = 'approved', decided_at = ?, commit_id = ?"
                " WHERE id = ?",
                (at, commit.id, qid),
            )
        self._commits.announce(commit)
        return commit

    async def reject(self, qid: str, at: float) -> QuarantinedEdit:
        """Drop a held edit; MemoryRefused when it is not waiting."""
        async with self._store.transaction() as w:
            row = await w.fetch_one(f"{_ROW} WHERE id = ? AND state = 'pending'", (qid,))
            if row is None:
                raise MemoryRefused("that memory edit is not waiting for a decision")
            await w.execute(
                "UPDATE memory_quarantine SET state = 'rejected', decided_at = ? WHERE id = ?",
                (at, qid),
            )
        self._receipts.append(
            Receipt(REJECTED, row[3], inputs={"quarantine_id": qid}, status=ReceiptStatus.REFUSED)
        )
        return _edit(row)
