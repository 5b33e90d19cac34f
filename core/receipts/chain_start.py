"""Where the checkpoints' chain begins, recorded in the ledger itself.

An emptied checkpoints.jsonl is caught at rest (the key is still there); but a restart used
to begin a new chain at #1 over the whole ledger, and verify saw a sound chain. Now a
start-up that begins a chain over receipts already there says so in a `checkpoint_chain`
receipt, and the new chain's checkpoints vouch for it: removing it means re-hashing the
ledger from there. The receipt says the chain was lost when the key is older than this start
and the ledger is past the first checkpoint. Verify fails on such a receipt, on a second
beginning, and on a first checkpoint past the first intervals with no beginning recorded.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from core.receipts.base import Checkpoint
from core.receipts.model import Receipt, ReceiptStatus
from core.storage.connections import connect_reader

KIND = "checkpoint_chain"
BEGAN, LOST = "began", "lost"
LEDGER = "ledger.db"
# The first checkpoint is due by `every_receipts`; a group commit may carry the head past it
# before the checkpoint is signed, so verify allows a second interval.
FIRST_INTERVALS = 2


def beginning(head: int, every_receipts: int, key_created: bool, key: str) -> Receipt:
    """The receipt a start-up writes before the first checkpoint of a chain over a ledger of
    `head` receipts (`key_created`: this start made the key). Lost when the key was there
    before and the ledger is past the first checkpoint: its checkpoints were removed."""
    lost = not key_created and head > every_receipts
    facts = {"over": head, "key": key, "key_created": key_created}
    if not lost:
        return Receipt(KIND, BEGAN, outputs=facts)
    return Receipt(
        KIND,
        LOST,
        outputs=facts,
        status=ReceiptStatus.FAILURE,
        error_message=(
            f"checkpoints.jsonl held no checkpoint, but checkpoint.key was here and the ledger"
            f" held {head:,} receipts, past the first checkpoint (due by #{every_receipts:,}):"
            " the checkpoint chain was lost and begins again here"
        ),
    )


@dataclass(frozen=True, slots=True)
class _Record:
    """A `checkpoint_chain` receipt: where it is and what it says."""

    seq: int
    name: str
    over: object


def records(ledger: Path) -> list[_Record]:
    """The `checkpoint_chain` receipts of the ledger file, in order (blocking, read-only)."""
    db = connect_reader(ledger)
    try:
        rows = db.execute(
            "SELECT seq, action_name, outputs FROM receipts WHERE action_type = ? ORDER BY seq",
            (KIND,),
        ).fetchall()
    finally:
        db.close()
    return [_Record(int(seq), str(name), _over(outputs)) for seq, name, outputs in rows]


def _over(outputs: str) -> object:
    try:
        return json.loads(outputs).get("over")
    except (ValueError, AttributeError):
        return None


def start_problem(
    ledger: Path,
    name: str,
    first: tuple[int, Checkpoint] | None,
    every_receipts: int,
) -> str | None:
    """Why the checkpoints' chain does not begin where it should, or None: a beginning
    recorded as lost, a second beginning, or `first` (the line of checkpoints file `name`
    holding #1, and #1) past the first intervals with no beginning recorded up to it."""
    try:
        found = records(ledger)
    except sqlite3.Error as exc:
        return f"{LEDGER}: cannot read its checkpoint_chain receipts: {exc}"
    problem = _recorded_problem(found)
    if problem is not None or first is None:
        return problem
    line, checkpoint = first
    if checkpoint.seq <= FIRST_INTERVALS * every_receipts:
        return None
    if any(r.seq <= checkpoint.seq for r in found):
        return None
    return (
        f"{name} line {line}: checkpoint #1 vouches for {checkpoint.seq:,} receipts, past the"
        f" first checkpoint (due by #{every_receipts:,}), and {LEDGER} records no chain"
        " beginning there: the checkpoints before it were removed"
    )


def _recorded_problem(found: Sequence[_Record]) -> str | None:
    """A beginning the ledger records as lost, or a second beginning."""
    lost = next((r for r in found if r.name == LOST), None)
    if lost is not None:
        return (
            f"{LEDGER} receipt #{lost.seq}: the checkpoint chain was lost (no checkpoint left"
            f" while the key stayed, over {lost.over} receipts) and began again there"
        )
    if len(found) > 1:
        again, first = found[1], found[0]
        return (
            f"{LEDGER} receipt #{again.seq}: a second checkpoint chain began there (the first"
            f" began at receipt #{first.seq}): the checkpoints and key before it were removed"
        )
    return None
