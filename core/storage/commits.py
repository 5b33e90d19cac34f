"""Where a small write goes: a group commit shared with other callers (state.db's writer,
core/delivery/writer.py) or, on its own, `Direct` on a connection."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import aiosqlite


class Commits(Protocol):
    """Runs one statement durably: the writes of many callers in one commit (state.db's
    writer) or `Direct`, one commit each."""

    async def execute(self, sql: str, params: Sequence[object] = ()) -> int:
        """Run one statement; durable on return; the rows it changed."""
        ...


@dataclass(frozen=True, slots=True)
class Direct:
    """Commits straight through a connection, one commit per statement."""

    db: aiosqlite.Connection

    async def execute(self, sql: str, params: Sequence[object] = ()) -> int:
        """Run one statement; the rows it changed."""
        cursor = await self.db.execute(sql, params)
        return cursor.rowcount
