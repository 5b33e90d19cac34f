"""The state database (state.db in LANCELOT_HOME), which several table owners share: each
owner's schema version is a row of `schema_versions` (`core.storage.versions.migrate`), and
the file's own layout (that table) is its `PRAGMA user_version`."""

from __future__ import annotations

from pathlib import Path

import aiosqlite

from core.storage.connections import open_db
from core.storage.versions import LAYOUT


async def open_state_db(path: Path) -> aiosqlite.Connection:
    """Open state.db, its layout current, after an integrity check."""
    return await open_db(path, LAYOUT, "state database", check=True)
