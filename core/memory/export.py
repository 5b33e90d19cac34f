"""The owner's view of memory outside chat: every row as JSON lines (`lancelot memory export`)
and the recent commits as rows for the terminal (`lancelot memory review`)."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from core.clock import iso
from core.errors import StorageError
from core.memory.model import Commit
from core.storage.connections import connect_reader

# kind -> (table, columns), in the order they are written
TABLES: dict[str, tuple[str, tuple[str, ...]]] = {
    "item": (
        "memory_items",
        ("id", "tier", "block", "chat", "conversation", "text", "provenance", "source",
         "created_at", "updated_at", "version", "commit_id"),
    ),
    "quarantined": (
        "memory_quarantine",
        ("id", "at", "provenance", "reason", "why", "ops", "state", "decided_at", "commit_id"),
    ),
    "commit": (
        "memory_commits",
        ("n", "id", "at", "provenance", "reason", "undo_of", "undone_by", "quarantine_id"),
    ),
    "change": ("memory_changes", ("commit_n", "pos", "op", "item_id", "before", "after")),
    "turn": (
        "memory_turns",
        ("n", "chat", "conversation", "role", "text", "receipt_id", "at", "summarised", "label"),
    ),
    "summary": (
        "memory_summaries",
        ("n", "chat", "conversation", "text", "first_turn", "last_turn", "at", "label"),
    ),
    "task": (
        "memory_tasks",
        ("chat", "request", "plan", "steps", "approval_id", "quest_id", "started_at",
         "updated_at"),
    ),
    "experience": (
        "memory_experiences",
        ("id", "request", "plan", "gaps", "actions", "outcome", "duration_ms", "at"),
    ),
    "used": ("memory_used", ("id", "at")),
}  # fmt: skip
_JSON_COLUMNS = {"ops", "before", "after", "plan", "steps", "gaps", "actions"}


async def export_jsonl(db_path: Path, out: Path) -> int:
    """Write every row of memory.db to `out` (readable by the owner only), one JSON object a
    line with its "kind"; how many lines. Runs on a read-only connection of its own in a
    thread: the memory keeps working meanwhile."""
    try:
        return await asyncio.to_thread(_export, db_path, out)
    except (sqlite3.Error, OSError) as exc:
        raise StorageError(f"{out}: cannot export the memory: {exc}") from None


def _export(db_path: Path, out: Path) -> int:
    db = connect_reader(db_path)
    lines = 0
    try:
        fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with open(fd, "w", encoding="utf-8") as sink:
            for kind, (table, columns) in TABLES.items():
                order = "id" if table == "memory_used" else "rowid"  # WITHOUT ROWID
                for row in db.execute(f"SELECT {', '.join(columns)} FROM {table} ORDER BY {order}"):
                    record = {"kind": kind, **dict(zip(columns, row, strict=True))}
                    for name in _JSON_COLUMNS & record.keys():
                        if (kind, name) != ("experience", "plan"):  # lines, not JSON
                            record[name] = _parsed(record[name])
                    sink.write(json.dumps(record, ensure_ascii=False) + "\n")
                    lines += 1
    finally:
        db.close()
    return lines


def _parsed(value: object) -> object:
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        return value


@dataclass(frozen=True, slots=True)
class ReviewRow:
    """One commit as `lancelot memory review` prints it."""

    commit_id: str
    at: str
    provenance: str
    reason: str
    changes: tuple[str, ...]
    undone_by: str | None

    def line(self) -> str:
        """The row as one terminal line and its changes indented below it."""
        undone = f" (undone by {self.undone_by})" if self.undone_by else ""
        head = f"{self.at}  {self.commit_id}  {self.provenance:<6}  {self.reason}{undone}"
        return "\n".join([head, *(f"    {c}" for c in self.changes)])


def review_row(commit: Commit, width: int = 80) -> ReviewRow:
    """A commit as a review row, each change's text cut to `width` characters."""
    changes = tuple(
        f"{c.op.value} {c.tier.value}{f' {c.block}' if c.block else ''} {c.item_id}: "
        + (c.text if len(c.text) <= width else c.text[: width - 1] + "…")
        for c in commit.changes
    )
    return ReviewRow(
        commit.id, iso(commit.at), commit.provenance.value, commit.reason, changes, commit.undone_by
    )
