"""Receipts as the ledger stores them, read straight from ledger.db for `lancelot receipts
export`: every stored field and both hashes, in sequence order, read-only."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

from core.receipts.schema import COLUMNS
from core.storage.connections import connect_reader


def stored_rows(
    path: Path, first: int = 1, last: int | None = None, action_type: str | None = None
) -> Iterator[tuple[object, ...]]:
    """The rows of receipts `first`..`last` (of one type, if given), oldest first. The file
    is opened read-only: nothing is created or changed. Raises sqlite3.Error."""
    where = ["seq >= ?", "seq <= ?"]
    params: list[object] = [first, last or 2**62]
    if action_type:
        where.append("action_type = ?")
        params.append(action_type)
    sql = f"SELECT {COLUMNS} FROM receipts WHERE {' AND '.join(where)} ORDER BY seq"
    with closing(connect_reader(path)) as db:
        yield from db.execute(sql, params)
