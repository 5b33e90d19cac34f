"""Queued receipts into chained ledger rows: redaction, canonical JSON and sha256 in one pass."""

from __future__ import annotations

import hashlib
import itertools
import logging
import math
from collections.abc import Iterator, Sequence
from json.encoder import encode_basestring
from typing import Any

from core.receipts.model import Receipt, ReceiptStatus
from core.receipts.model import canonical_json as _json
from core.receipts.redaction import Redactor

log = logging.getLogger(__name__)

# A receipt's values in COLUMNS order (schema.py): what INSERT takes and what SELECT gives.
Row = tuple[Any, ...]
SEQ, ID, HASH = 0, 1, 16
SALVAGE_LIMIT = 4000  # characters of an unstorable value's repr kept in its place
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1  # what an INTEGER column holds


def ledger_row(redactor: Redactor, receipt: Receipt, seq: int, prev_hash: str) -> Row:
    """The stored form of `receipt` at `seq`, redacted, hashed onto `prev_hash`.

    Data that JSON or UTF-8 cannot hold (a lone surrogate, a key that is not a string, a
    cycle) does not stop the ledger: the receipt is stored with a printable account of it.
    """
    try:
        return _ledger_row(redactor, receipt, seq, prev_hash)
    except Exception as exc:
        # Only names here: the data itself may hold secrets, and redaction is what failed.
        kind = type(exc).__name__
        log.error(
            "receipt %s (%s) stored with its data as text: %s",
            receipt.id,
            receipt.action_type,
            kind,
        )
        return _ledger_row(redactor, salvaged(receipt, exc), seq, prev_hash)


def salvaged(receipt: Receipt, exc: Exception) -> Receipt:
    """The receipt with every text made valid UTF-8 and its data replaced by its repr."""
    r = receipt
    note = f"receipt data could not be stored as given ({type(exc).__name__}: {str(exc)[:200]})"
    return Receipt(
        action_type=_text(r.action_type) or "?",
        action_name=_text(r.action_name) or "?",
        inputs=_as_repr(r.inputs),
        outputs=_as_repr(r.outputs),
        status=r.status if isinstance(r.status, ReceiptStatus) else ReceiptStatus.FAILURE,
        duration_ms=_storable(r.duration_ms, float),
        token_count=_storable(r.token_count, int),
        cognition_tier=_text(r.cognition_tier),
        parent_id=_text(r.parent_id),
        quest_id=_text(r.quest_id),
        error_message=_text(f"{r.error_message}; {note}" if r.error_message else note),
        metadata={"salvaged": _as_repr(r.metadata)},
        id=_text(r.id) or "?",
        timestamp=_text(r.timestamp) or "?",
    )


def _text(value: object) -> str | None:
    """`value` as a string that UTF-8 can hold (lone surrogates written as escapes)."""
    if value is None:
        return None
    return str(value).encode("utf-8", "backslashreplace").decode("utf-8")


def _as_repr(value: object) -> str | None:
    if value is None:
        return None
    try:
        text = repr(value)
    except Exception:  # a repr that fails, or nesting too deep to print
        text = f"<unprintable {type(value).__name__}>"
    return _text(text[:SALVAGE_LIMIT])


def _ledger_row(redactor: Redactor, receipt: Receipt, seq: int, prev_hash: str) -> Row:
    """ledger_row, for data that can be stored as it is.

    The content holds exactly StoredReceipt.content()'s keys and values (verification
    recomputes the hash from the stored row with that method), written in sorted key order
    so that its canonical JSON needs no sort.
    """
    r, redact = receipt, redactor.value
    inputs, outputs = _json(redact(r.inputs)), _json(redact(r.outputs))
    metadata, status = _json(redact(r.metadata)), str(r.status)
    error = redactor.text(r.error_message) if r.error_message else None
    duration, tokens = _as_stored(r.duration_ms, float), _as_stored(r.token_count, int)
    content: dict[str, Any] = {  # sorted key order, as canonical JSON has them
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
        *(metadata, prev_hash, link(prev_hash, content)),
    )


def link(prev_hash: str, content: dict[str, Any]) -> str:
    """model.chain_hash(prev_hash, content) for a content dict in sorted key order."""
    text = content_json(content)
    return hashlib.sha256(f"{prev_hash}{text}".encode()).hexdigest()


def content_json(c: dict[str, Any]) -> str:
    """canonical_json(c), written out directly for the usual field types: the generic
    encoder costs several times more. Anything unusual takes the generic path."""
    seq, duration, tokens = c["seq"], c["duration_ms"], c["token_count"]
    if not (
        type(seq) is int
        and (duration is None or (type(duration) is float and math.isfinite(duration)))
        and (tokens is None or type(tokens) is int)
    ):
        return _json(c)
    s = encode_basestring  # what the generic encoder does with any str (subclasses too)
    try:
        ct, err = c["cognition_tier"], c["error_message"]
        parent, quest = c["parent_id"], c["quest_id"]
        ct, err = "null" if ct is None else s(ct), "null" if err is None else s(err)
        parent = "null" if parent is None else s(parent)
        quest = "null" if quest is None else s(quest)
        return (
            f'{{"action_name":{s(c["action_name"])},"action_type":{s(c["action_type"])},'
            f'"cognition_tier":{ct},"duration_ms":{_number(duration)},'
            f'"error_message":{err},"id":{s(c["id"])},'
            f'"inputs":{s(c["inputs"])},"metadata":{s(c["metadata"])},'
            f'"outputs":{s(c["outputs"])},"parent_id":{parent},'
            f'"quest_id":{quest},"seq":{int.__repr__(seq)},'
            f'"status":{s(c["status"])},"timestamp":{s(c["timestamp"])},'
            f'"token_count":{_number(tokens)}}}'
        )
    except TypeError:  # a field that is not a string
        return _json(c)


def _number(value: float | None) -> str:
    return "null" if value is None else repr(value)


def _as_stored(number: Any, kind: type[float] | type[int]) -> Any:
    """A number as its REAL or INTEGER column gives it back (5 -> 5.0, 3.0 -> 3, True -> 1):
    the hash must cover what verification will read, or an honest receipt would look altered.

    Raises ValueError for what the column cannot give back as it was: text (SQLite turns
    "12" into 12) or an integer beyond 64 bits (sqlite3 cannot bind it at all).
    """
    if number is None or number != number:
        return None  # SQLite stores NaN as NULL
    if isinstance(number, bool):
        number = int(number)
    if kind is float and isinstance(number, int):
        return float(number)
    if kind is int and isinstance(number, float) and number.is_integer():
        number = int(number)
    if isinstance(number, int) and not INT64_MIN <= number <= INT64_MAX:
        raise ValueError(f"{number} does not fit a 64-bit INTEGER column")
    if not isinstance(number, int | float):
        raise ValueError(f"not a number: {type(number).__name__}")
    return number


def _storable(number: Any, kind: type[float] | type[int]) -> Any:
    """_as_stored's answer, or None for a value the column cannot hold (a salvaged receipt's)."""
    try:
        return _as_stored(number, kind)
    except (ValueError, OverflowError):
        return None


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


def chained_chunks(
    redactor: Redactor,
    receipts: Sequence[Receipt],
    seq: int,
    prev_hash: str,
    out: list[Row],
    size: int,
) -> Iterator[Row]:
    """chained_rows, `size` rows at a time flattened into one multi-row INSERT's parameters."""
    rows = chained_rows(redactor, receipts, seq, prev_hash, out)
    while chunk := tuple(itertools.chain.from_iterable(itertools.islice(rows, size))):
        yield chunk
