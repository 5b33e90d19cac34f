"""The onboarding state in state.db: one row, owned here alone."""

from __future__ import annotations

import time
from collections.abc import Callable

import aiosqlite

from core.onboarding.progress import Progress, Status, Step
from core.storage.versions import Schema, migrate

SCHEMA = Schema(
    "onboarding",
    (
        """
CREATE TABLE IF NOT EXISTS onboarding (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    status TEXT NOT NULL,
    step TEXT NOT NULL,
    name TEXT,
    provider TEXT,
    timezone TEXT,
    updated_at REAL NOT NULL
)
""",
    ),
)


class OnboardingStore:
    """Reads and writes the owner's onboarding progress (a restart resumes it)."""

    def __init__(self, db: aiosqlite.Connection, clock: Callable[[], float] = time.time) -> None:
        self._db = db
        self._clock = clock

    async def setup(self) -> None:
        """Create or upgrade the table."""
        await migrate(self._db, SCHEMA)

    async def load(self) -> Progress:
        """The saved progress (NOT_STARTED on a fresh home)."""
        sql = "SELECT status, step, name, provider, timezone FROM onboarding WHERE id = 1"
        async with self._db.execute(sql) as cur:
            row = await cur.fetchone()
        if row is None:
            return Progress()
        status, step, name, provider, timezone = row
        return Progress(Status(status), Step(step), name, provider, timezone)

    async def save(self, progress: Progress) -> None:
        """Keep `progress` durably (one statement)."""
        p = progress
        async with self._db.execute(
            "INSERT INTO onboarding (id, status, step, name, provider, timezone, updated_at)"
            " VALUES (1, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET"
            " status = excluded.status, step = excluded.step, name = excluded.name,"
            " provider = excluded.provider, timezone = excluded.timezone,"
            " updated_at = excluded.updated_at",
            (p.status.value, p.step.value, p.name, p.provider, p.timezone, self._clock()),
        ):
            pass
