"""Verification of the ledger file: the hash chain, every signed checkpoint, a fingerprint.

It reads the file only (a read-only connection; nothing is created), hashes every receipt,
and answers with a VerifyReport that names the file, the checkpoints it matched and the
first thing wrong: a receipt altered, removed or moved; a chain rewritten under a
checkpoint; a tail cut off below one; a checkpoint whose signature fails, or one missing,
repeated or moved in the checkpoints' own chain; key files that do not belong together;
checkpoints removed while their key stays; a fingerprint from elsewhere that differs.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from core.receipts.base import Checkpoint, VerifyReport, fingerprint
from core.receipts.chain_start import start_problem
from core.receipts.evidence import Evidence
from core.receipts.fingerprints import Fingerprint, KeyFingerprint
from core.receipts.model import GENESIS_HASH
from core.receipts.schema import SCHEMA
from core.receipts.signing import PUBLIC_FILE, CheckpointVerifier
from core.receipts.walk import Span, walk_span
from core.storage.connections import connect_reader
from core.storage.versions import check_version

# A ledger this long is walked in spans, one process each (hashing is CPU work that one
# thread cannot spread); below it, starting the processes costs more than they save.
PARALLEL_FROM = 200_000
# Two subqueries, each answered from the primary key's ends: min() and max() in one SELECT
# make SQLite scan every receipt (4.5 s at ten million, most of an incremental verify).
ENDS = "SELECT (SELECT min(seq) FROM receipts), (SELECT max(seq) FROM receipts)"
MAX_PROCESSES = 8


@dataclass
class _Walk:
    """What the spans found, together: as one walk from the first receipt would have."""

    checked: int = 0
    head: tuple[int, str] = (0, GENESIS_HASH)
    matched: int = 0
    last_matched: Checkpoint | None = None
    bad_seq: int | None = None
    reason: str | None = None
    against_hash: str | None = None


def verify_ledger(
    path: Path,
    evidence: Evidence | None = None,
    against: Fingerprint | KeyFingerprint | None = None,
    *,
    processes: int | None = None,
) -> VerifyReport:
    """Verify the ledger at `path` (blocking) against the checkpoints and keys in `evidence`
    and against a fingerprint of either kind; a long ledger in `processes` (default: one
    per CPU) at once. An unreadable file is a failed report; a file from a newer Lancelot
    raises StorageError (this code cannot tell what it holds)."""
    found = evidence.read() if evidence is not None else None
    checkpoints = found.checkpoints if found is not None else ()
    position = against if isinstance(against, Fingerprint) else None
    try:
        spans = walk_file(path, checkpoints, position, processes)
    except sqlite3.Error as exc:
        reason = f"cannot read the ledger: {exc}"
        return VerifyReport(False, 0, None, reason, str(path), readable=False)
    walk = merge(spans)
    if walk.reason is None:
        check_ends(walk, checkpoints, position)
    if walk.reason is None and evidence is not None and found is not None:
        walk.reason = evidence.problem(found, walk.head[0])
    if walk.reason is None and evidence is not None and found is not None:
        name = evidence.log.path.name
        walk.reason = start_problem(path, name, found.first, evidence.every_receipts)
    verifier = evidence.keys.verifier if evidence is not None else None
    if walk.reason is None and isinstance(against, KeyFingerprint):
        walk.reason = _check_key(verifier, against)
    return VerifyReport(
        ok=walk.reason is None,
        checked=walk.checked,
        first_bad_seq=walk.bad_seq,
        reason=walk.reason,
        file=str(path),
        checkpoints=walk.matched,
        last_checkpoint=walk.last_matched,
        head=fingerprint(*walk.head),
        key=verifier.fingerprint if verifier is not None else None,
    )


def _check_key(verifier: CheckpointVerifier | None, against: KeyFingerprint) -> str | None:
    """Why the checkpoints' public key is not the one the fingerprint names, or None."""
    if verifier is None:
        return f"re-keyed: no {PUBLIC_FILE} here, but the key fingerprint {against} names one"
    if against.matches(verifier.digest):
        return None
    return (
        f"re-keyed: {PUBLIC_FILE} is {verifier.fingerprint}, not the key fingerprint {against}:"
        " the checkpoints were signed with another key"
    )


def walk_file(
    path: Path,
    checkpoints: Iterable[Checkpoint],
    against: Fingerprint | None,
    processes: int | None,
    *,
    low: int | None = None,
) -> list[Span]:
    """Walk the ledger from receipt `low` (default: the whole ledger), in spans; raises
    sqlite3.Error for a file it cannot read."""
    db = connect_reader(path)
    try:
        (version,) = db.execute("PRAGMA user_version").fetchone()
        check_version(str(path), SCHEMA, int(version))
        first, high = db.execute(ENDS).fetchone()
    finally:
        db.close()
    if high is None:
        return []
    if low is None:
        low = min(int(first), 1)  # a seq below 1 is itself a problem the walk must see
    if low > high:
        return []
    count = max(1, processes or os.cpu_count() or 1)
    if high - low < PARALLEL_FROM:
        count = 1
    bounds = _split(low, int(high), min(count, MAX_PROCESSES))
    marks = [_marks_within(checkpoints, lo, hi) for lo, hi in bounds]
    spot = against.seq if against is not None else None
    if len(bounds) == 1:
        return [walk_span(path, *bounds[0], marks[0], spot)]
    import multiprocessing  # here: a long ledger's verify is the only user of processes
    from concurrent.futures import ProcessPoolExecutor

    spawn = multiprocessing.get_context("spawn")  # never fork a process with threads
    with ProcessPoolExecutor(len(bounds), mp_context=spawn) as pool:
        futures = [
            pool.submit(walk_span, path, lo, hi, at, spot)
            for (lo, hi), at in zip(bounds, marks, strict=True)
        ]
        return [future.result() for future in futures]


def _split(low: int, high: int, parts: int) -> list[tuple[int, int]]:
    """[low, high] cut into `parts` consecutive ranges."""
    size = -(-(high - low + 1) // parts)
    return [(start, min(start + size - 1, high)) for start in range(low, high + 1, size)]


def _marks_within(
    checkpoints: Iterable[Checkpoint], low: int, high: int
) -> dict[int, list[Checkpoint]]:
    marks: dict[int, list[Checkpoint]] = {}
    for checkpoint in checkpoints:
        if low <= checkpoint.seq <= high:
            marks.setdefault(checkpoint.seq, []).append(checkpoint)
    return marks


def merge(
    spans: Sequence[Span],
    *,
    start: tuple[int, str] = (0, GENESIS_HASH),
    matched: Checkpoint | None = None,
) -> _Walk:
    """The spans in order, up to the first that stopped at a problem; `start` and `matched`:
    the receipt and the checkpoint before the first span (an incremental verify's)."""
    walk = _Walk(head=start, last_matched=matched)
    for span in spans:
        walk.checked += span.checked
        walk.matched += span.matched
        if span.head is not None:
            walk.head = span.head
        if span.against_hash is not None:
            walk.against_hash = span.against_hash
        walk.last_matched = span.last_matched or walk.last_matched
        if span.broken is not None:
            walk.bad_seq, walk.reason = span.bad_seq, _rewritten(span.broken, walk.last_matched)
            return walk
        if span.failed:
            walk.bad_seq, walk.reason = span.bad_seq, span.reason
            return walk
    return walk


def _rewritten(broken: Checkpoint, matched_before: Checkpoint | None) -> str:
    since = matched_before.fingerprint if matched_before else "the first receipt"
    return (
        f"rewritten: the hash here is not the one checkpoint {broken.fingerprint}"
        f" (signed {broken.time}) vouches for; something from after {since}"
        " up to here was changed and the chain re-hashed"
    )


def check_ends(walk: _Walk, checkpoints: Iterable[Checkpoint], against: Fingerprint | None) -> None:
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
        return
    # Receipt #0 is the chain's start: the fingerprint an empty ledger reports.
    seen = GENESIS_HASH if against.seq == 0 else walk.against_hash
    if seen is None or not seen.startswith(against.prefix):
        found = fingerprint(against.seq, seen or "?")
        walk.bad_seq = against.seq
        walk.reason = f"rewritten: receipt #{against.seq} is {found}, not the fingerprint {against}"
