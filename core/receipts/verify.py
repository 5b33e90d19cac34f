"""Verification of the ledger file: the hash chain, every signed checkpoint, a fingerprint.

It reads the file only (a read-only connection; nothing is created), hashes every receipt,
and answers with a VerifyReport that names the file, the checkpoints it matched and the
first thing wrong: a receipt altered, removed or moved; a chain rewritten under a
checkpoint; a tail cut off below one; a checkpoint whose signature fails.
"""

from __future__ import annotations

import multiprocessing
import os
import re
import sqlite3
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from core.receipts.base import Checkpoint, VerifyReport, fingerprint
from core.receipts.checkpoints import CheckpointLog
from core.receipts.model import GENESIS_HASH
from core.receipts.schema import SCHEMA
from core.receipts.signing import CheckpointVerifier
from core.receipts.walk import Span, connect, walk_span
from core.state import check_version

_FINGERPRINT = re.compile(r"^\s*#?(\d{1,18})\s*:\s*([0-9a-fA-F]{8,64})\s*$")
# A ledger this long is walked in spans, one process each (hashing is CPU work that one
# thread cannot spread); below it, starting the processes costs more than they save.
PARALLEL_FROM = 200_000
MAX_PROCESSES = 8


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
    log: CheckpointLog | None = None,
    verifier: CheckpointVerifier | None = None,
    against: Fingerprint | None = None,
    *,
    processes: int | None = None,
) -> VerifyReport:
    """Verify the ledger at `path` (blocking) against the checkpoints in `log`, checked with
    `verifier`, and against a fingerprint; a long ledger in `processes` (default: one per
    CPU) at once. An unreadable file is a failed report; a file from a newer Lancelot
    raises StorageError (this code cannot tell what it holds)."""
    evidence = log.read(verifier) if log is not None else None
    checkpoints = evidence.checkpoints if evidence else ()
    try:
        spans = _walk_file(path, checkpoints, against, processes)
    except sqlite3.Error as exc:
        reason = f"cannot read the ledger: {exc}"
        return VerifyReport(False, 0, None, reason, str(path), readable=False)
    walk = _merge(spans)
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
    path: Path,
    checkpoints: Iterable[Checkpoint],
    against: Fingerprint | None,
    processes: int | None,
) -> list[Span]:
    """Walk the whole ledger, in spans; raises sqlite3.Error for a file it cannot read."""
    uri = path.resolve().as_uri()
    db = connect(uri)
    try:
        (version,) = db.execute("PRAGMA user_version").fetchone()
        check_version(str(path), SCHEMA, int(version))
        low, high = db.execute("SELECT min(seq), max(seq) FROM receipts").fetchone()
    finally:
        db.close()
    if high is None:
        return []
    low = min(int(low), 1)  # a seq below 1 is itself a problem the walk must see
    count = max(1, processes or os.cpu_count() or 1)
    if high - low < PARALLEL_FROM:
        count = 1
    bounds = _split(low, int(high), min(count, MAX_PROCESSES))
    marks = [_marks_within(checkpoints, lo, hi) for lo, hi in bounds]
    spot = against.seq if against is not None else None
    if len(bounds) == 1:
        return [walk_span(uri, *bounds[0], marks[0], spot)]
    spawn = multiprocessing.get_context("spawn")  # never fork a process with threads
    with ProcessPoolExecutor(len(bounds), mp_context=spawn) as pool:
        futures = [
            pool.submit(walk_span, uri, lo, hi, at, spot)
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


def _merge(spans: Sequence[Span]) -> _Walk:
    """The spans in order, up to the first that stopped at a problem."""
    walk = _Walk()
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
