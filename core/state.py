"""The state database (state.db in LANCELOT_HOME): tokens, sessions, outbox, approvals.

Each subsystem owns its tables and creates them itself; this module only opens the file.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import aiosqlite

from core.errors import StorageError


async def open_state_db(path: Path) -> aiosqlite.Connection:
    """Open state.db with WAL and full durability; raise StorageError with the cause."""
    db: aiosqlite.Connection | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        db = await aiosqlite.connect(path, isolation_level=None)
        await db.execute("PRAGMA journal_mode=WAL")
        await db.execute("PRAGMA synchronous=FULL")
        await db.execute("PRAGMA busy_timeout=5000")
        async with db.execute("PRAGMA quick_check") as cur:
            row = await cur.fetchone()
        if not row or row[0] != "ok":
            raise sqlite3.DatabaseError(f"integrity check failed: {row[0] if row else '?'}")
    except (sqlite3.Error, OSError) as exc:
        if db is not None:
            await db.close()
        raise StorageError(f"{path}: cannot open the state database: {exc}") from None
    return db
