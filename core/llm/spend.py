"""What the paid models cost, call by call, and the budget's marks (warnings sent, allowances
granted); kept in state.db so a restart neither forgets the spend nor warns twice."""

from __future__ import annotations

from dataclasses import dataclass

import aiosqlite

from core.storage.commits import Commits, Direct
from core.storage.versions import Schema, migrate

SCHEMA = Schema(
    "llm_spend",
    (
        """
CREATE TABLE IF NOT EXISTS llm_spend (
    at REAL NOT NULL,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cost_usd REAL NOT NULL,
    priced INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS llm_spend_by_time ON llm_spend(at);
CREATE TABLE IF NOT EXISTS llm_budget_marks (
    mark TEXT PRIMARY KEY,
    amount_usd REAL NOT NULL DEFAULT 0,
    at REAL NOT NULL
);
""",
    ),
)

KEEP_SECONDS = 62 * 86400  # a month and a bit: what the monthly budget can still need


@dataclass(frozen=True, slots=True)
class SpendRow:
    """One paid call: who answered, its tokens, and what it was counted as costing."""

    at: float
    provider: str
    model: str
    input_tokens: int
    output_tokens: int
    cost_usd: float
    priced: bool


class SpendBook:
    """The owner of llm_spend and llm_budget_marks. `writer`: where each paid call is
    committed (state.db's group commit), else one commit each on `db`."""

    def __init__(self, db: aiosqlite.Connection, *, writer: Commits | None = None) -> None:
        self._db = db
        self._commits = writer or Direct(db)

    async def setup(self, now: float) -> None:
        """Create or upgrade the tables; forget calls too old for any budget."""
        await migrate(self._db, SCHEMA)
        await self._db.execute("DELETE FROM llm_spend WHERE at < ?", (now - KEEP_SECONDS,))

    async def record(self, row: SpendRow) -> None:
        """Add one paid call."""
        await self._commits.execute(
            "INSERT INTO llm_spend (at, provider, model, input_tokens, output_tokens, cost_usd,"
            " priced) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                row.at,
                row.provider,
                row.model,
                row.input_tokens,
                row.output_tokens,
                row.cost_usd,
                int(row.priced),
            ),
        )

    async def spent_since(self, start: float) -> float:
        """USD counted for the calls made at or after `start`."""
        async with self._db.execute(
            "SELECT COALESCE(SUM(cost_usd), 0) FROM llm_spend WHERE at >= ?", (start,)
        ) as cursor:
            row = await cursor.fetchone()
        return float(row[0]) if row else 0.0

    async def mark_once(self, mark: str, now: float) -> bool:
        """Set `mark` (a warning sent for one period); False when it was already set."""
        cursor = await self._db.execute(
            "INSERT OR IGNORE INTO llm_budget_marks (mark, amount_usd, at) VALUES (?, 0, ?)",
            (mark, now),
        )
        return cursor.rowcount == 1

    async def add(self, mark: str, amount: float, now: float) -> float:
        """Add `amount` to the sum kept under `mark` (an allowance for one day); the new sum."""
        await self._db.execute(
            "INSERT INTO llm_budget_marks (mark, amount_usd, at) VALUES (?, ?, ?)"
            " ON CONFLICT (mark) DO UPDATE SET amount_usd = amount_usd + excluded.amount_usd,"
            " at = excluded.at",
            (mark, amount, now),
        )
        return await self.amount(mark)

    async def amount(self, mark: str) -> float:
        """The sum kept under `mark` (0 when unset)."""
        async with self._db.execute(
            "SELECT amount_usd FROM llm_budget_marks WHERE mark = ?", (mark,)
        ) as cursor:
            row = await cursor.fetchone()
        return float(row[0]) if row else 0.0
