"""Queued receipts into chained ledger rows: redaction, canonical JSON and sha256 in one pass."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from core.receipts.model import Receipt, chain_hash
from core.receipts.model import canonical_json as _json
from core.security.redaction import Redactor

# A receipt's values in COLUMNS order (schema.py): what INSERT takes and what SELECT gives.
Row = tuple[Any, ...]
SEQ, HASH = 0, 16


def ledger_row(redactor: Redactor, receipt: Receipt, seq: int, prev_hash: str) -> Row:
    """The stored form of `receipt` at `seq`, redacted, hashed onto `prev_hash`.

    The content holds exactly StoredReceipt.content()'s keys and values (verification
    recomputes the hash from the stored row with that method), written in sorted key order
    so that its canonical JSON needs no sort.
    """
    r, redact = receipt, redactor.value
    inputs, outputs = _json(redact(r.inputs)), _json(redact(r.outputs))
    metadata, status = _json(redact(r.metadata)), str(r.status)
    error = redactor.text(r.error_message) if r.error_message else None
    duration, tokens = _as_stored(r.duration_ms, float), _as_stored(r.token_count, int)
    content: dict[str, Any] = {
        "action_name": r.action_name,
        "action_type": r.action_type,
        "cognition_tier": r.cognition_tier,
        "duration_ms": duration,
        "error_message": error,
        "id": r.id,
        "inputs": inputs,
        "metadata": metadata,
        "outputs": outputs,
        "parent_id": r.parent_id,
        "quest_id": r.quest_id,
        "seq": seq,
        "status": status,
        "timestamp": r.timestamp,
        "token_count": tokens,
    }
    return (
        *(seq, r.id, r.timestamp, r.action_type, r.action_name, inputs, outputs, status),
        *(duration, tokens, r.cognition_tier, r.parent_id, r.quest_id, error),
        *(metadata, prev_hash, chain_hash(prev_hash, content, keys_sorted=True)),
    )


def _as_stored(number: Any, kind: type[float] | type[int]) -> Any:
    """A number as its REAL or INTEGER column gives it back (5 -> 5.0, 3.0 -> 3): the hash
    must cover what verification will read, or an honest receipt would look altered."""
    if type(number) is kind or number is None:
        return number
    if kind is float and isinstance(number, int):
        return float(number)
    if kind is int and isinstance(number, float) and number.is_integer():
        return int(number)
    return number


def chained_rows(
    redactor: Redactor, receipts: Sequence[Receipt], seq: int, prev_hash: str, out: list[Row]
) -> Iterator[Row]:
    """Rows for `receipts` after (`seq`, `prev_hash`), each also appended to `out`.

    A generator so that executemany consumes it in the database thread: the CPU work and the
    INSERT happen in one call there, off the event loop, with one thread hop per batch.
    """
    for receipt in receipts:
        seq += 1
        row = ledger_row(redactor, receipt, seq, prev_hash)
        out.append(row)
        prev_hash = row[HASH]
        yield row
