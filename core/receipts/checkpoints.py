"""Signed checkpoints of the ledger's head, kept in a file apart from ledger.db.

The hash chain shows an edit in the middle, but not a cut tail or a chain re-hashed after an
edit: anyone who can write the file can do either and leave a chain that verifies. A
checkpoint is a signed (seq, head hash, time): a ledger shorter than a checkpoint, or whose
hash at a checkpoint's seq differs, was cut or rewritten.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from core.receipts import chain_start
from core.receipts.base import Checkpoint
from core.receipts.checkpoint_chain import Line, chain_problem
from core.receipts.model import Receipt
from core.receipts.signing import CheckpointSigner, CheckpointVerifier
from core.runtime.tasks import Supervisor

log = logging.getLogger(__name__)

CHECKPOINTS_FILE = "checkpoints.jsonl"
# Checkpoints by count are at least this far apart: a burst of receipts (20,000 a second in
# bulk) would otherwise sync the checkpoint file 20 times a second, competing with the
# ledger's own syncs for the disk. The burst's end is signed once the gap has passed.
MIN_GAP_SECONDS = 1.0
TAIL_BYTES = 8192  # enough to hold the last few lines


@dataclass(frozen=True, slots=True)
class CheckpointFile:
    """The checkpoints read from the file, and what was wrong with any line; `first`: the
    line holding checkpoint #1 and #1, when the file begins the numbered chain with it."""

    checkpoints: tuple[Checkpoint, ...]
    problems: tuple[str, ...]
    first: Line | None = None
    anchor_gone: bool = False  # read after a checkpoint that is no longer in the file


def utc_now(clock: Callable[[], float] = time.time) -> str:
    """The checkpoint time format: UTC to the second."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(clock()))


class CheckpointLog:
    """An append-only JSONL file, one signed checkpoint a line, synced after each."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def append(self, checkpoint: Checkpoint) -> None:
        """Add a checkpoint and sync it to disk (blocking)."""
        line = json.dumps(
            {
                "n": checkpoint.number,
                "seq": checkpoint.seq,
                "head": checkpoint.head,
                "time": checkpoint.time,
                "prev": checkpoint.previous,
                "sig": checkpoint.signature,
            },
            separators=(",", ":"),
        )
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, f"{line}\n".encode("ascii"))
            os.fsync(fd)
        finally:
            os.close(fd)

    def touch(self) -> None:
        """Create the file (0600) if missing: from then on, its absence means deletion."""
        os.close(os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600))
        os.chmod(self.path, 0o600)

    def read(
        self, verifier: CheckpointVerifier | None, after: Checkpoint | None = None
    ) -> CheckpointFile:
        """Every checkpoint whose signature verifies; a problem for each line that does not
        (or for any line at all, without a key to check it), then for the first break in
        their chain. A last line cut short by a crash while writing is skipped: it vouches
        for nothing. `after`: a checkpoint an earlier verify checked (an incremental verify):
        only the lines after it are checked and returned, and it must still be there."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            data = b""
            if after is None:
                return CheckpointFile((), ())
        lines = data.split(b"\n")
        complete, last = lines[:-1], lines[-1]
        anchor = _anchor(complete, after) if after is not None else None
        if after is not None and anchor is None:
            gone = f"{self.path.name}: checkpoint {after.fingerprint}, verified before, is gone"
            return CheckpointFile((), (gone,), anchor_gone=True)
        skip = anchor[0] if anchor is not None else 0
        found, problems = self._checked(complete, verifier, skip)
        if last.strip() and parse(last) is not None:
            problems.append(f"{self.path.name}: its last line has no line end (altered)")
        broken = chain_problem(self.path.name, found, anchor)
        problems.extend([broken] if broken is not None else [])
        first = found[0] if found and found[0][1].number == 1 and anchor is None else None
        return CheckpointFile(tuple(c for _, c in found), tuple(problems), first)

    def _checked(
        self, complete: list[bytes], verifier: CheckpointVerifier | None, skip: int
    ) -> tuple[list[Line], list[str]]:
        """The lines after the first `skip` whose signatures verify, and a problem for each
        of the others."""
        found: list[Line] = []
        problems: list[str] = []
        for number, line in enumerate(complete[skip:], start=skip + 1):
            if not line.strip():
                continue
            checkpoint = parse(line)
            if checkpoint is None:
                problems.append(f"{self.path.name} line {number}: not a checkpoint")
            elif verifier is None:
                problems.append(f"{self.path.name}: no public key to check its signatures")
                break
            elif not verifier.valid(checkpoint):
                problems.append(
                    f"{self.path.name} line {number}: the signature of checkpoint "
                    f"{checkpoint.fingerprint} does not verify (forged or altered)"
                )
            else:
                found.append((number, checkpoint))
        return found, problems

    def last(self, verifier: CheckpointVerifier) -> Checkpoint | None:
        """The newest checkpoint with a valid signature (reads the end of the file only)."""
        try:
            with self.path.open("rb") as handle:
                handle.seek(max(0, self.path.stat().st_size - TAIL_BYTES))
                tail = handle.read()
        except FileNotFoundError:
            return None
        for line in reversed(tail.split(b"\n")[:-1]):
            checkpoint = parse(line)
            if checkpoint is not None and verifier.valid(checkpoint):
                return checkpoint
        return None


def _anchor(complete: list[bytes], checkpoint: Checkpoint) -> Line | None:
    """The first line holding exactly `checkpoint`, or None. The first: a copy of it put at
    the end must not let the lines between go unchecked."""
    for number, line in enumerate(complete, start=1):
        if line.strip() and parse(line) == checkpoint:
            return number, checkpoint
    return None


def parse(line: bytes) -> Checkpoint | None:
    """A checkpoint line, or None if it is not one. A line without "n" and "prev" is a
    legacy checkpoint (number 0), written before checkpoints were numbered."""
    try:
        item = json.loads(line)
        seq, head, when, sig = item["seq"], item["head"], item["time"], item["sig"]
        number, previous = item.get("n", 0), item.get("prev", "")
    except (ValueError, TypeError, KeyError, AttributeError):
        return None
    if not (type(seq) is int and seq >= 0 and all(isinstance(v, str) for v in (head, when, sig))):
        return None
    if not (type(number) is int and isinstance(previous, str)):
        return None
    if (number == 0) != (previous == "") or number < 0:  # both or neither
        return None
    return Checkpoint(seq, head, when, sig, number, previous)


class Checkpointer:
    """Decides when to checkpoint and writes checkpoints off the event loop.

    The ledger tells it each committed head (`note`); a checkpoint is written once
    `every_receipts` receipts have come since the last, by a timer every `every_seconds`
    if the head moved, on demand (`now`), and when the ledger closes (`stop`).
    """

    def __init__(
        self,
        signer: CheckpointSigner,
        log_file: CheckpointLog,
        *,
        every_receipts: int = 1000,
        every_seconds: float = 300.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._signer = signer
        self._log = log_file
        self._every = every_receipts
        self._interval = every_seconds
        self._clock = clock
        self._head: tuple[int, str] | None = None
        self._lock = asyncio.Lock()
        self._pending: asyncio.Task[None] | None = None
        self._timer: asyncio.Task[None] | None = None
        self._written_at = -MIN_GAP_SECONDS  # monotonic time of the last checkpoint written
        self._supervisor = Supervisor()
        self.latest: Checkpoint | None = None

    @property
    def verifier(self) -> CheckpointVerifier:
        """The public half of the key, for verification."""
        return self._signer.verifier

    @property
    def log(self) -> CheckpointLog:
        """The file the checkpoints go to."""
        return self._log

    @property
    def every_receipts(self) -> int:
        """How many receipts may come after the last checkpoint before the next is due."""
        return self._every

    async def start(self, head: tuple[int, str], tasks: Supervisor) -> None:
        """Begin at the ledger's committed head: read the last checkpoint, cover a head it
        does not (after a crash), and start the timer. A chain that begins over receipts
        already there is the ledger's to begin (`beginning`), recorded before its first
        checkpoint."""
        self._supervisor = tasks
        self._head = head
        await asyncio.to_thread(self._log.touch)
        self.latest = await asyncio.to_thread(self._log.last, self.verifier)
        if self.latest is not None and head[0] < self.latest.seq:
            log.critical(
                "the receipt ledger ends at #%d, but checkpoint %s vouches for %d receipts:"
                " it was cut (lancelot receipts verify tells more)",
                head[0],
                self.latest.fingerprint,
                self.latest.seq,
            )
        if self.latest is not None and head[0] > self.latest.seq:
            await self.now()
        self._timer = tasks.spawn(self._tick(), name="ledger-checkpoints")

    def beginning(self, head: int) -> Receipt | None:
        """The receipt to write before this chain's first checkpoint, when it begins over
        `head` receipts already in the ledger (after start); None otherwise."""
        if self.latest is not None or head == 0:
            return None
        signer, key = self._signer, self._signer.verifier.fingerprint
        return chain_start.beginning(head, self._every, signer.created, key)

    def note(self, seq: int, head: str) -> None:
        """The ledger committed up to `seq`; start a checkpoint in the background if due."""
        self._head = (seq, head)
        covered = self.latest.seq if self.latest else 0
        idle = self._pending is None or self._pending.done()
        if seq - covered >= self._every and idle:
            wait = self._written_at + MIN_GAP_SECONDS - time.monotonic()
            self._pending = self._supervisor.spawn(
                self._background(max(0.0, wait)), name="ledger-checkpoint"
            )

    async def now(self) -> Checkpoint | None:
        """A checkpoint at the head noted last (the latest one if it is there already)."""
        async with self._lock:
            head = self._head
            if head is None or head[0] == 0:
                return self.latest
            if self.latest is not None and self.latest.seq == head[0]:
                return self.latest
            checkpoint = self._signer.sign(head[0], head[1], utc_now(self._clock), self.latest)
            await asyncio.to_thread(self._log.append, checkpoint)
            self.latest, self._written_at = checkpoint, time.monotonic()
            return checkpoint

    async def stop(self) -> None:
        """Stop the timer and write the last checkpoint (the ledger has committed all)."""
        if self._timer is not None:
            self._timer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._timer
        if self._pending is not None:
            self._pending.cancel()  # a wait ends; a write under way finishes (shielded)
            await asyncio.wait([self._pending])
        self._timer = self._pending = None
        await self._background()

    async def _background(self, wait: float = 0.0) -> None:
        try:
            if wait:
                await asyncio.sleep(wait)
            # Shielded: a write that has begun finishes (and is remembered) even if the
            # ledger closes meanwhile.
            await asyncio.shield(self.now())
        except OSError as exc:
            log.error("ledger checkpoint not written to %s: %s", self._log.path, exc)

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(self._interval)
            await self._background()
