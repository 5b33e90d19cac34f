"""Verification of the ledger file: the hash chain, every signed checkpoint, a fingerprint.

It reads the file only (a read-only connection; nothing is created), hashes every receipt,
and answers with a VerifyReport that names the file, the checkpoints it matched and the
first thing wrong: a receipt altered, removed or moved; a chain rewritten under a
checkpoint; a tail cut off below one; a checkpoint whose signature fails.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from core.receipts.base import Checkpoint, VerifyReport, fingerprint
from core.receipts.chain import link
from core.receipts.checkpoints import CheckpointLog
from core.receipts.model import GENESIS_HASH
from core.receipts.schema import COLUMNS, SCHEMA
from core.receipts.signing import CheckpointVerifier
from core.state import check_version

_FINGERPRINT = re.compile(r"^\s*#?(\d{1,18})\s*:\s*([0-9a-fA-F]{8,64})\s*$")
ROWS_AT_ONCE = 4096


@dataclass(frozen=True, slots=True)
class Fingerprint:
    """A ledger position copied from elsewhere (a digest card): seq and a hash prefix."""

    seq: int
    prefix: str

    @classmethod
    def parse(cls, text: str) -> Fingerprint:
        """`<seq>:<hex>` (8 to 64 hex digits); ValueError otherwise."""
        found = _FINGERPRINT.match(text)
        if found is None:
            raise ValueError(f"not a fingerprint: {text!r} (expected <seq>:<hex>, e.g. 120:9f2c…)")
        return cls(int(found.group(1)), found.group(2).lower())

    def __str__(self) -> str:
        return f"{self.seq}:{self.prefix}"


@dataclass
class _Walk:
    """What the walk has learnt so far."""

    checked: int = 0
    head: tuple[int, str] = (0, GENESIS_HASH)
    matched: int = 0
    last_matched: Checkpoint | None = None
    bad_seq: int | None = None
    reason: str | None = None
    against_hash: str | None = None


def verify_ledger(
    path: Path,
    log: CheckpointLog | None = None,
    verifier: CheckpointVerifier | None = None,
    against: Fingerprint | None = None,
) -> VerifyReport:
    """Verify the ledger at `path` (blocking) against the checkpoints in `log`, checked with
    `verifier`, and against a fingerprint. An unreadable file is a failed report; a file
    from a newer Lancelot raises StorageError (this code cannot tell what it holds)."""
    evidence = log.read(verifier) if log is not None else None
    checkpoints = evidence.checkpoints if evidence else ()
    walk = _Walk()
    try:
        _walk_file(path, checkpoints, against, walk)
    except sqlite3.Error as exc:
        reason = f"cannot read the ledger: {exc}"
        return VerifyReport(False, walk.checked, None, reason, str(path), readable=False)
    if walk.reason is None:
        _check_ends(walk, checkpoints, against)
    if walk.reason is None and evidence is not None and evidence.problems:
        walk.reason = evidence.problems[0]
    if walk.reason is None and log is not None and verifier is not None:
        walk.reason = _missing(log, walk.head[0])
    return VerifyReport(
        ok=walk.reason is None,
        checked=walk.checked,
        first_bad_seq=walk.bad_seq,
        reason=walk.reason,
        file=str(path),
        checkpoints=walk.matched,
        last_checkpoint=walk.last_matched,
        head=fingerprint(*walk.head),
    )


def _missing(log: CheckpointLog, head: int) -> str | None:
    """A signed ledger with receipts whose checkpoint file is gone was tampered with: the
    file is made when signing starts, before any checkpoint is due."""
    if head == 0 or log.path.exists():
        return None
    return f"{log.path.name} is missing: nothing vouches for the ledger's length"


def _walk_file(
    path: Path, checkpoints: Iterable[Checkpoint], against: Fingerprint | None, walk: _Walk
) -> None:
    marks: dict[int, list[Checkpoint]] = {}
    for checkpoint in checkpoints:
        marks.setdefault(checkpoint.seq, []).append(checkpoint)
    db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=5)
    try:
        (version,) = db.execute("PRAGMA user_version").fetchone()
        check_version(str(path), SCHEMA, int(version))
        cursor = db.execute(f"SELECT {COLUMNS} FROM receipts ORDER BY seq")
        prev, expected = GENESIS_HASH, 1
        while rows := cursor.fetchmany(ROWS_AT_ONCE):
            for row in rows:
                walk.checked += 1
                seq, stored_hash = row[0], row[16]
                problem = _link_problem(row, expected, prev)
                if problem is None and seq in marks:
                    problem = _mark_problem(seq, stored_hash, marks[seq], walk)
                if problem is not None:
                    walk.bad_seq, walk.reason = seq, problem
                    return
                if against is not None and seq == against.seq:
                    walk.against_hash = stored_hash
                prev, expected = stored_hash, seq + 1
                walk.head = (seq, stored_hash)
    finally:
        db.close()


def _link_problem(row: tuple[object, ...], expected: int, prev: str) -> str | None:
    """Why a stored row does not continue the chain, or None."""
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


def _mark_problem(seq: int, head: str, at: list[Checkpoint], walk: _Walk) -> str | None:
    for checkpoint in at:
        if checkpoint.head != head:
            since = walk.last_matched.fingerprint if walk.last_matched else "the first receipt"
            return (
                f"rewritten: the hash here is not the one checkpoint {checkpoint.fingerprint}"
                f" (signed {checkpoint.time}) vouches for; something from after {since}"
                " up to here was changed and the chain re-hashed"
            )
        walk.matched += 1
        walk.last_matched = checkpoint
    return None


def _check_ends(
    walk: _Walk, checkpoints: Iterable[Checkpoint], against: Fingerprint | None
) -> None:
    """A ledger that ends before a checkpoint (or the fingerprint) was cut."""
    last = walk.head[0]
    beyond = [c for c in checkpoints if c.seq > last]
    if beyond:
        top = max(beyond, key=lambda c: c.seq)
        walk.bad_seq = last + 1
        walk.reason = (
            f"truncated: the ledger ends at receipt #{last}, but checkpoint {top.fingerprint}"
            f" (signed {top.time}) vouches for {top.seq:,} receipts:"
            f" {top.seq - last:,} missing from the end"
        )
        return
    if against is None:
        return
    if against.seq > last:
        walk.bad_seq = last + 1
        walk.reason = (
            f"truncated: the ledger ends at receipt #{last}, but the fingerprint {against}"
            f" vouches for {against.seq:,} receipts"
        )
    elif walk.against_hash is None or not walk.against_hash.startswith(against.prefix):
        found = fingerprint(against.seq, walk.against_hash or "?")
        walk.bad_seq = against.seq
        walk.reason = f"rewritten: receipt #{against.seq} is {found}, not the fingerprint {against}"
