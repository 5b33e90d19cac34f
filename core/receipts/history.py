"""Receipts of one kind read straight from ledger.db for replay: a request's (by its quest)
or a period's (from a timestamp on), oldest first, the file opened read-only."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

from core.receipts.model import StoredReceipt
from core.receipts.schema import COLUMNS
from core.storage.connections import connect_reader


def stored_of_kind(
    path: Path, action_type: str, *, quest_id: str | None = None, since: str | None = None
) -> Iterator[StoredReceipt]:
    """The receipts of `action_type` in quest `quest_id` (when given) with timestamps from
    `since` on (ISO UTC, when given), in sequence order. Nothing is created or changed.
    Raises sqlite3.Error."""
    where, params = ["action_type = ?"], [action_type]
    if quest_id is not None:
        where.append("quest_id = ?")
        params.append(quest_id)
    if since is not None:
        where.append("timestamp >= ?")
        params.append(since)
    sql = f"SELECT {COLUMNS} FROM receipts WHERE {' AND '.join(where)} ORDER BY seq"
    with closing(connect_reader(path)) as db:
        for row in db.execute(sql, params):
            yield StoredReceipt(*row)


def receipt_exists(path: Path, receipt_id: str) -> bool:
    """Whether the ledger at `path` holds a receipt with this id. Raises sqlite3.Error."""
    with closing(connect_reader(path)) as db:
        row = db.execute("SELECT 1 FROM receipts WHERE id = ?", (receipt_id,)).fetchone()
    return row is not None
