"""Crusader mode: a time-boxed switch that lets T1 work run without a card. Persisted."""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import aiosqlite

from core.storage.versions import Schema, migrate

SCHEMA = Schema(
    "crusader",
    ("CREATE TABLE IF NOT EXISTS crusader (id INTEGER PRIMARY KEY CHECK (id = 1), until REAL)",),
)


class CrusaderMode:
    """On until a deadline (the Soul's max duration) or until switched off."""

    def __init__(self, db: aiosqlite.Connection, clock: Callable[[], float] = time.time) -> None:
        self._db = db
        self._clock = clock
        self._until = 0.0

    async def setup(self) -> None:
        """Create or upgrade the table and load the saved state."""
        await migrate(self._db, SCHEMA)
        async with self._db.execute("SELECT until FROM crusader WHERE id = 1") as cur:
            row = await cur.fetchone()
        self._until = float(row[0] or 0) if row else 0.0

    def active(self) -> bool:
        """Whether Crusader mode is on right now."""
        return self._clock() < self._until

    def remaining_minutes(self) -> int:
        """Minutes left, rounded up: at least 1 while on, 0 when off."""
        return max(0, math.ceil((self._until - self._clock()) / 60))

    async def switch(self, on: bool, minutes: int) -> None:
        """Turn on for `minutes`, or off."""
        self._until = self._clock() + minutes * 60 if on else 0.0
        await self._db.execute(
            "INSERT INTO crusader (id, until) VALUES (1, ?)"
            " ON CONFLICT(id) DO UPDATE SET until = excluded.until",
            (self._until,),
        )
