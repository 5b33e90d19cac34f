"""The chain walk over one span of seqs: every receipt re-hashed, links and checkpoints checked.

A span starts from the receipt stored just before it, so spans can be walked apart (in
processes of their own, for a big ledger) and together say what one walk from the start
would: its inputs and its result are plain, picklable values.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from core.receipts.base import Checkpoint
from core.receipts.chain import link
from core.receipts.model import GENESIS_HASH
from core.receipts.schema import COLUMNS
from core.storage.connections import connect_reader

ROWS_AT_ONCE = 4096


@dataclass
class Span:
    """What walking seqs [low, high] found. `broken`: the checkpoint the ledger no longer
    matches (at `bad_seq`); `reason`: a receipt that does not continue the chain."""

    checked: int = 0
    head: tuple[int, str] | None = None  # the last receipt that verified
    matched: int = 0
    last_matched: Checkpoint | None = None
    bad_seq: int | None = None
    reason: str | None = None
    broken: Checkpoint | None = None
    against_hash: str | None = None

    @property
    def failed(self) -> bool:
        """The walk stopped at a problem."""
        return self.bad_seq is not None


def walk_span(
    path: Path,
    low: int,
    high: int,
    marks: dict[int, list[Checkpoint]],
    against_seq: int | None = None,
) -> Span:
    """Walk the receipts with seqs in [low, high] of the ledger at `path` (read-only: verification
    never creates or changes a file).
    Raises sqlite3.Error for a file that cannot be read."""
    span = Span()
    db = connect_reader(path)
    try:
        before = db.execute(
            "SELECT seq, hash FROM receipts WHERE seq < ? ORDER BY seq DESC LIMIT 1", (low,)
        ).fetchone()
        expected, prev = (int(before[0]) + 1, str(before[1])) if before else (1, GENESIS_HASH)
        cursor = db.execute(
            f"SELECT {COLUMNS} FROM receipts WHERE seq BETWEEN ? AND ? ORDER BY seq", (low, high)
        )
        while rows := cursor.fetchmany(ROWS_AT_ONCE):
            for row in rows:
                span.checked += 1
                seq, stored = row[0], row[16]
                problem = link_problem(row, expected, prev)
                if problem is not None:
                    span.bad_seq, span.reason = seq, problem
                    return span
                for checkpoint in marks.get(seq, ()):
                    if checkpoint.head != stored:
                        span.bad_seq, span.broken = seq, checkpoint
                        return span
                    span.matched += 1
                    span.last_matched = checkpoint
                if seq == against_seq:
                    span.against_hash = stored
                prev, expected = stored, seq + 1
                span.head = (seq, stored)
    finally:
        db.close()
    return span


def link_problem(row: tuple[object, ...], expected: int, prev: str) -> str | None:
    """Why a stored row (values in COLUMNS order) does not continue the chain, or None."""
    seq, prev_hash, stored = row[0], row[15], row[16]
    if seq != expected:
        return f"receipt(s) {expected}..{int(str(seq)) - 1} missing before this one"
    if prev_hash != prev:
        return "does not follow the receipt before it (removed or reordered)"
    content = {  # StoredReceipt.content(), in sorted key order
        "action_name": row[4],
        "action_type": row[3],
        "cognition_tier": row[10],
        "duration_ms": row[8],
        "error_message": row[13],
        "id": row[1],
        "inputs": row[5],
        "metadata": row[14],
        "outputs": row[6],
        "parent_id": row[11],
        "quest_id": row[12],
        "seq": seq,
        "status": row[7],
        "timestamp": row[2],
        "token_count": row[9],
    }
    try:
        if link(prev, content) == stored:
            return None
    except (TypeError, ValueError, UnicodeError):
        pass
    return "content does not match its hash (altered)"
