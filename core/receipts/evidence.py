"""What vouches for a ledger besides itself: its checkpoint file and key files, read together.

Someone who can write LANCELOT_HOME can change one without the other: empty the checkpoint
file while the key that signed it stays, or re-sign the checkpoints with a new key and put its
public half in checkpoint.pub beside the original private key. Each leaves a trace here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from core.receipts.base import Checkpoint
from core.receipts.checkpoints import CHECKPOINTS_FILE, CheckpointFile, CheckpointLog
from core.receipts.signing import KEY_FILE, KeyFiles, read_keys


@dataclass(frozen=True, slots=True)
class Evidence:
    """A ledger's checkpoint file, its key files, and how many receipts may come after the
    last checkpoint before the next is due (the first checkpoint is due by then)."""

    log: CheckpointLog
    keys: KeyFiles
    every_receipts: int

    @classmethod
    def beside(cls, log: CheckpointLog, every_receipts: int) -> Evidence:
        """The checkpoint file `log` and the key files in its folder (blocking).
        StorageError names a key file that is not a key."""
        return cls(log, read_keys(log.path.parent), every_receipts)

    @classmethod
    def of_home(cls, home: Path, every_receipts: int) -> Evidence:
        """The checkpoint and key files of a home (blocking)."""
        return cls.beside(CheckpointLog(home / CHECKPOINTS_FILE), every_receipts)

    def read(self) -> CheckpointFile:
        """The checkpoints, checked with the public key, and what is wrong with any line."""
        return self.log.read(self.keys.verifier)

    def read_after(self, anchor: Checkpoint) -> CheckpointFile:
        """The checkpoints after `anchor` (one an earlier verify checked), checked with the
        public key, and what is wrong with any of those lines or with `anchor`'s place."""
        return self.log.read(self.keys.verifier, after=anchor)

    def problem(self, found: CheckpointFile, head: int, *, anchored: bool = False) -> str | None:
        """The first thing wrong with the evidence for a ledger of `head` receipts, or None:
        keys that do not belong together, a bad checkpoint line, a break in the chain, or
        checkpoints that should be there and are not (`anchored`: `found` holds only those
        after a checkpoint an earlier verify checked, which vouches that they were there)."""
        if self.keys.mismatch is not None:
            return self.keys.mismatch
        if found.problems:
            return found.problems[0]
        return None if anchored else self._unvouched(found, head)

    def _unvouched(self, found: CheckpointFile, head: int) -> str | None:
        """The checkpoint file is made when signing starts, before any checkpoint is due: a
        signed ledger without it, or grown past the first checkpoint with it empty while the
        key is still there, had its checkpoints removed."""
        name = self.log.path.name
        if head > 0 and self.keys.verifier is not None and not self.log.path.exists():
            return f"{name} is missing: nothing vouches for the ledger's length"
        if found.checkpoints or not self.keys.private or head <= self.every_receipts:
            return None
        return (
            f"{name} is empty, but {KEY_FILE} is here and the ledger holds {head:,} receipts,"
            f" past the first checkpoint (due by #{self.every_receipts:,}): its checkpoints"
            " were removed"
        )
