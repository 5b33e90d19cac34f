"""Builds the receipt ledger of a home: ledger.db, its search index, its signed checkpoints."""

from __future__ import annotations

from pathlib import Path

from core.config import Settings
from core.receipts.checkpoints import CHECKPOINTS_FILE, Checkpointer, CheckpointLog
from core.receipts.ledger import SqliteLedger
from core.receipts.redaction import Redactor
from core.receipts.signing import CheckpointSigner
from core.runtime.tasks import Supervisor

LEDGER_FILE = "ledger.db"


def checkpointer_for(settings: Settings, home: Path) -> Checkpointer:
    """The home's checkpoint key (made on first use) and file, on the settings' schedule.
    Raises StorageError when the key cannot be read or made."""
    conf = settings.ledger
    return Checkpointer(
        CheckpointSigner.load_or_create(home),
        CheckpointLog(home / CHECKPOINTS_FILE),
        every_receipts=conf.checkpoint_every_receipts,
        every_seconds=conf.checkpoint_every_minutes * 60,
    )


def build_ledger(
    settings: Settings, home: Path, redactor: Redactor, tasks: Supervisor
) -> SqliteLedger:
    """The ledger of `home` (not yet open), batching and checkpointing as the settings say."""
    return SqliteLedger(
        home / LEDGER_FILE,
        redactor=redactor,
        batch_size=settings.ledger.batch_size,
        flush_interval=settings.ledger.flush_interval_ms / 1000,
        tasks=tasks,
        checkpoints=checkpointer_for(settings, home),
    )
