"""An incremental verify: only what came after the last checkpoint a verify has already
checked.

A full verify re-hashes every receipt and checks every checkpoint's signature: about a
minute for ten million receipts. After one has passed, the newest checkpoint it matched is
kept in `verified.json` beside the ledger (the mark). The next incremental verify starts
from that checkpoint: it must still be in checkpoints.jsonl, exactly as signed, and the
ledger's receipt at its seq must still hash to its head. From there, the receipts after it
are re-hashed, and the checkpoints after it have their signatures and links checked, as a
full verify would.

What it does not do is re-read the receipts under the mark: an edit there that kept the
stored hashes is found by the next full verify, not this one. Without a mark (or with one
that cannot be read) it runs the full verify, and records the mark when that passes.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path
from typing import NamedTuple

from core.receipts.base import Checkpoint, VerifyReport, fingerprint
from core.receipts.chain_start import KIND as CHAIN_START_KIND
from core.receipts.evidence import Evidence
from core.receipts.verify import check_ends, merge, verify_ledger, walk_file
from core.storage.connections import connect_reader
from soul.atomic import write_atomic

log = logging.getLogger(__name__)

MARK_FILE = "verified.json"


class IncrementalReport(NamedTuple):
    """A verify's report, and the checkpoint it started from (None: it was a full verify)."""

    report: VerifyReport
    since: Checkpoint | None


def verify_since_mark(path: Path, evidence: Evidence) -> IncrementalReport:
    """Verify the ledger at `path` from the mark beside it, or in full without one
    (blocking); a passing verify moves the mark to the newest checkpoint it matched."""
    mark_file = path.parent / MARK_FILE
    anchor = read_mark(mark_file)
    if anchor is None:
        report = verify_ledger(path, evidence)
    else:
        report = _verify_after(path, evidence, anchor)
    if report.ok:
        newest = report.last_checkpoint or anchor
        if newest is not None and newest != anchor:
            write_mark(mark_file, newest)
    return IncrementalReport(report, anchor)


def read_mark(mark_file: Path) -> Checkpoint | None:
    """The checkpoint a passing verify last matched, or None (no mark, or one that cannot be
    read: then the verify is a full one)."""
    try:
        item = json.loads(mark_file.read_text(encoding="utf-8"))
        return Checkpoint(
            seq=int(item["seq"]),
            head=str(item["head"]),
            time=str(item["time"]),
            signature=str(item["sig"]),
            number=int(item["n"]),
            previous=str(item["prev"]),
        )
    except FileNotFoundError:
        return None
    except (OSError, ValueError, TypeError, KeyError) as exc:
        log.warning("%s cannot be read (%s); verifying in full", mark_file, exc)
        return None


def write_mark(mark_file: Path, checkpoint: Checkpoint) -> None:
    """Keep `checkpoint` as the point the next incremental verify starts from."""
    c = checkpoint
    item = {"n": c.number, "seq": c.seq, "head": c.head, "time": c.time}
    item |= {"prev": c.previous, "sig": c.signature}
    write_atomic(mark_file, json.dumps(item, separators=(",", ":")) + "\n")


def _verify_after(path: Path, evidence: Evidence, anchor: Checkpoint) -> VerifyReport:
    """The receipts and checkpoints after `anchor`, checked as a full verify would."""
    found = evidence.read_after(anchor)
    verifier = evidence.keys.verifier
    key = verifier.fingerprint if verifier is not None else None
    file = str(path)
    if found.anchor_gone:  # nothing vouches for where to start
        return VerifyReport(False, 0, None, found.problems[0], file, key=key)
    try:
        at_anchor = _stored_hash(path, anchor.seq)
        spans = walk_file(path, found.checkpoints, None, None, low=anchor.seq + 1)
    except sqlite3.Error as exc:
        reason = f"cannot read the ledger: {exc}"
        return VerifyReport(False, 0, None, reason, file, readable=False, key=key)
    problem = _anchor_problem(anchor, at_anchor)
    if problem is not None:
        return VerifyReport(False, 0, anchor.seq, problem, file, last_checkpoint=None, key=key)
    walk = merge(spans, start=(anchor.seq, anchor.head), matched=anchor)
    if walk.reason is None:
        check_ends(walk, found.checkpoints, None)
    if walk.reason is None:
        walk.reason = evidence.problem(found, walk.head[0], anchored=True)
    if walk.reason is None:
        walk.reason = _began_again(path, anchor)
    return VerifyReport(
        ok=walk.reason is None,
        checked=walk.checked,
        first_bad_seq=walk.bad_seq,
        reason=walk.reason,
        file=file,
        checkpoints=walk.matched,
        last_checkpoint=walk.last_matched,
        head=fingerprint(*walk.head),
        key=key,
    )


def _stored_hash(path: Path, seq: int) -> str | None:
    """The stored hash of receipt `seq`, or None when there is no such receipt."""
    db = connect_reader(path)
    try:
        row = db.execute("SELECT hash FROM receipts WHERE seq = ?", (seq,)).fetchone()
    finally:
        db.close()
    return None if row is None else str(row[0])


def _anchor_problem(anchor: Checkpoint, stored: str | None) -> str | None:
    """Why the ledger no longer holds what the verified checkpoint vouches for, or None."""
    if stored is None:
        return (
            f"truncated: receipt #{anchor.seq} is gone, but checkpoint {anchor.fingerprint}"
            f" (signed {anchor.time}, verified before) vouches for it"
        )
    if stored != anchor.head:
        return (
            f"rewritten: receipt #{anchor.seq} is {fingerprint(anchor.seq, stored)}, not what"
            f" checkpoint {anchor.fingerprint} (signed {anchor.time}, verified before)"
            " vouches for"
        )
    return None


def _began_again(path: Path, anchor: Checkpoint) -> str | None:
    """A checkpoint chain beginning recorded after a point already verified: the chain was
    lost and started over (a start-up records a beginning only before the first
    checkpoint)."""
    db = connect_reader(path)
    try:
        row = db.execute(
            "SELECT seq FROM receipts WHERE action_type = ? AND seq > ? ORDER BY seq LIMIT 1",
            (CHAIN_START_KIND, anchor.seq),
        ).fetchone()
    finally:
        db.close()
    if row is None:
        return None
    return (
        f"ledger.db receipt #{row[0]}: a checkpoint chain began again there, after"
        f" checkpoint {anchor.fingerprint} had been verified: the checkpoints were removed"
    )
