"""The Receipt record and how it is hashed into the chain."""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from enum import StrEnum
from json.encoder import encode_basestring
from typing import Any

GENESIS_HASH = "0" * 64


class ReceiptStatus(StrEnum):
    """How an action ended."""

    SUCCESS = "success"
    FAILURE = "failure"
    REFUSED = "refused"
    PENDING = "pending"
    SKIPPED = "skipped"


# The formatted second, reused by every receipt made within it (formatting is the dear part).
_second: tuple[int, str] = (-1, "")


def _now() -> str:
    """UTC now as 2026-01-02T03:04:05.123456Z (the form isoformat gives, floored to µs)."""
    global _second
    seconds, micros = divmod(time.time_ns() // 1000, 1_000_000)
    second = _second
    if second[0] != seconds:
        second = _second = (seconds, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)))
    return f"{second[1]}.{micros:06d}Z"


# Random parts of ids, drawn from the OS in blocks (one getrandom() call per receipt is a
# system call per receipt). list.pop() is atomic, so threads never share one.
_tails: list[str] = []


def _new_id() -> str:
    """32 hex digits: milliseconds since the epoch (12), then 80 random bits (20), as in
    UUIDv7. New ids sort after older ones, so the id index grows at its end: a batch
    dirties a few pages of it, not nearly all of them."""
    try:
        tail = _tails.pop()
    except IndexError:
        block = os.urandom(10 * 256).hex()
        _tails.extend(block[i : i + 20] for i in range(0, len(block), 20))
        tail = _tails.pop()
    return f"{time.time_ns() // 1_000_000:012x}{tail}"


def new_receipt_id() -> str:
    """A fresh receipt id, for a caller that must name a receipt before it is made."""
    return _new_id()


def canonical_json(value: Any) -> str:
    """Stable JSON: sorted keys, no spaces, UTF-8 kept; non-JSON values become strings."""
    if value is None:
        return "null"
    if value == {}:
        return "{}"
    if _c_encode is None:
        return _encoder.encode(value)
    return "".join(_c_encode(value, 0))


_encoder = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
# The same encoder's C core, built once: JSONEncoder.encode rebuilds it on every call, which
# costs as much as encoding a small receipt. Same output (the ledger's hashes depend on it);
# no circular-reference check (a cycle ends in RecursionError instead of ValueError).
_c_make_encoder = getattr(json.encoder, "c_make_encoder", None)
_c_encode = (
    None
    if _c_make_encoder is None
    else _c_make_encoder(None, str, encode_basestring, None, ":", ",", True, False, True)
)


@dataclass(frozen=True, slots=True)
class Receipt:
    """One thing Lancelot did (or refused to do). Inputs and outputs are redacted JSON data."""

    action_type: str
    action_name: str
    inputs: Any = None
    outputs: Any = None
    status: ReceiptStatus = ReceiptStatus.SUCCESS
    duration_ms: float | None = None
    token_count: int | None = None
    cognition_tier: str | None = None
    parent_id: str | None = None
    quest_id: str | None = None
    error_message: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    id: str = field(default_factory=_new_id)
    timestamp: str = field(default_factory=_now)


@dataclass(frozen=True, slots=True)
class StoredReceipt:
    """A receipt as the ledger holds it: JSON columns as text, plus its place in the chain."""

    seq: int
    id: str
    timestamp: str
    action_type: str
    action_name: str
    inputs: str
    outputs: str
    status: str
    duration_ms: float | None
    token_count: int | None
    cognition_tier: str | None
    parent_id: str | None
    quest_id: str | None
    error_message: str | None
    metadata: str
    prev_hash: str
    hash: str

    def content(self) -> dict[str, Any]:
        """The fields the hash covers (everything but the hashes themselves)."""
        return {
            "seq": self.seq,
            "id": self.id,
            "timestamp": self.timestamp,
            "action_type": self.action_type,
            "action_name": self.action_name,
            "inputs": self.inputs,
            "outputs": self.outputs,
            "status": self.status,
            "duration_ms": self.duration_ms,
            "token_count": self.token_count,
            "cognition_tier": self.cognition_tier,
            "parent_id": self.parent_id,
            "quest_id": self.quest_id,
            "error_message": self.error_message,
            "metadata": self.metadata,
        }

    def expected_hash(self) -> str:
        """sha256 over the previous hash and this receipt's canonical JSON."""
        return chain_hash(self.prev_hash, self.content())

    def decoded(self, name: str) -> Any:
        """A JSON column (inputs, outputs, metadata) parsed back into data."""
        raw: str = getattr(self, name)
        try:
            return json.loads(raw)
        except ValueError:
            return raw


def chain_hash(prev_hash: str, content: dict[str, Any]) -> str:
    """The chain link: sha256(prev_hash + canonical JSON of the content)."""
    digest = hashlib.sha256(prev_hash.encode("ascii"))
    digest.update(canonical_json(content).encode("utf-8"))
    return digest.hexdigest()
