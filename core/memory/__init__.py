"""Lancelot's memory: conversations, working tasks, core blocks, facts and task experiences in
memory.db, edited by commits (undoable, with receipts) or held in quarantine for the owner."""

from core.memory.blocks import Block
from core.memory.model import (
    CleanupReport,
    Commit,
    Committed,
    CompiledContext,
    Counts,
    Experience,
    Item,
    MemoryRefused,
    Provenance,
    Quarantined,
    QuarantinedEdit,
    Remembered,
    Tier,
    Turn,
    UndoRefused,
    WorkingTask,
)
from core.memory.service import Memory
from core.memory.store import MemoryStore

__all__ = [
    "Block",
    "CleanupReport",
    "Commit",
    "Committed",
    "CompiledContext",
    "Counts",
    "Experience",
    "Item",
    "Memory",
    "MemoryRefused",
    "MemoryStore",
    "Provenance",
    "Quarantined",
    "QuarantinedEdit",
    "Remembered",
    "Tier",
    "Turn",
    "UndoRefused",
    "WorkingTask",
]
