"""Health alerts' memory in state.db, so that a restart neither repeats nor loses an alert."""

from __future__ import annotations

import logging
import sqlite3

import aiosqlite
from pydantic import BaseModel, ConfigDict, ValidationError

from core.storage.versions import Schema, migrate

log = logging.getLogger(__name__)

SCHEMA = Schema(
    "health_alerts",
    (
        """
CREATE TABLE IF NOT EXISTS health_alert_state (
    name TEXT PRIMARY KEY,
    data TEXT NOT NULL,
    updated_at REAL NOT NULL
)
""",
    ),
)
ROW = "health"  # one row: alerts follow the rolled-up snapshot (its failing checks inside)


class SavedSpell(BaseModel):
    """The degraded spell in progress, as its alert card knows it."""

    model_config = ConfigDict(frozen=True)

    card_id: str
    since: float
    reasons: tuple[str, ...]
    repeats: int = 0
    seen: tuple[str, ...] = ()
    failing: tuple[str, ...] = ()  # the names of the checks failing when last seen


class SavedAlerts(BaseModel):
    """What the alerts knew after the last tick that changed something."""

    model_config = ConfigDict(frozen=True)

    state: str  # "ok" or "degraded" ("unknown" is never saved)
    muted_until: float = 0.0
    transitions: int = 0
    spell: SavedSpell | None = None


class AlertStateStore:
    """One row in state.db, rewritten whenever the alerts' state changes."""

    def __init__(self, db: aiosqlite.Connection) -> None:
        self._db = db

    async def setup(self) -> None:
        """Create or upgrade the table."""
        await migrate(self._db, SCHEMA)

    async def load(self) -> SavedAlerts | None:
        """The last saved state; None on a fresh home (or an unreadable row, logged)."""
        async with self._db.execute(
            "SELECT data FROM health_alert_state WHERE name = ?", (ROW,)
        ) as cur:
            row = await cur.fetchone()
        if row is None:
            return None
        try:
            return SavedAlerts.model_validate_json(row[0])
        except ValidationError:
            log.warning("health alerts: the saved state is unreadable; starting afresh")
            return None

    async def save(self, saved: SavedAlerts, now: float) -> None:
        """Replace the row. A failed write is logged: the alerts carry on in memory."""
        try:
            await self._db.execute(
                "INSERT INTO health_alert_state (name, data, updated_at) VALUES (?, ?, ?)"
                " ON CONFLICT(name) DO UPDATE SET"
                " data = excluded.data, updated_at = excluded.updated_at",
                (ROW, saved.model_dump_json(), now),
            )
        except sqlite3.Error as exc:
            log.warning("health alerts: could not save their state: %s", exc)
