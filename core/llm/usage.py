"""Token and cost totals per lane, kept in state.db so /usage survives restarts."""

from __future__ import annotations

from dataclasses import dataclass

import aiosqlite

from core.llm.types import Lane, Usage
from core.storage.commits import Commits, Direct
from core.storage.versions import Schema, migrate

SCHEMA = Schema(
    "llm_usage",
    (
        """
CREATE TABLE IF NOT EXISTS llm_usage (
    lane TEXT NOT NULL,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    calls INTEGER NOT NULL DEFAULT 0,
    failures INTEGER NOT NULL DEFAULT 0,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cost_usd REAL NOT NULL DEFAULT 0,
    saved_usd REAL NOT NULL DEFAULT 0,
    PRIMARY KEY (lane, provider, model)
)
""",
    ),
)

_UPSERT = """
INSERT INTO llm_usage (lane, provider, model, calls, failures, input_tokens, output_tokens,
                       cost_usd, saved_usd)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (lane, provider, model) DO UPDATE SET
    calls = calls + excluded.calls,
    failures = failures + excluded.failures,
    input_tokens = input_tokens + excluded.input_tokens,
    output_tokens = output_tokens + excluded.output_tokens,
    cost_usd = cost_usd + excluded.cost_usd,
    saved_usd = saved_usd + excluded.saved_usd
"""


@dataclass(frozen=True, slots=True)
class LaneUsage:
    """Totals for one lane."""

    lane: str
    calls: int = 0
    failures: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    saved_usd: float = 0.0

    @property
    def tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True, slots=True)
class UsageSummary:
    """Every lane's totals (in lane order) and the grand totals."""

    lanes: tuple[LaneUsage, ...]

    @property
    def cost_usd(self) -> float:
        """Money spent on flagship calls."""
        return sum(lane.cost_usd for lane in self.lanes)

    @property
    def saved_usd(self) -> float:
        """What the local calls would have cost on the flagship."""
        return sum(lane.saved_usd for lane in self.lanes)

    @property
    def tokens(self) -> int:
        """All tokens, every lane."""
        return sum(lane.tokens for lane in self.lanes)

    def lane(self, lane: Lane) -> LaneUsage:
        """One lane's totals (zeros if it was never used)."""
        return next((u for u in self.lanes if u.lane == lane.value), LaneUsage(lane.value))


class UsageBook:
    """Adds up each model call; its table lives in state.db beside the other subsystems'.

    `writer`: where its additions are committed (state.db's group commit), else one commit
    each on `db`; reads always go through `db`."""

    def __init__(self, db: aiosqlite.Connection, *, writer: Commits | None = None) -> None:
        self._db = db
        self._commits = writer or Direct(db)

    async def setup(self) -> None:
        """Create or upgrade the table."""
        await migrate(self._db, SCHEMA)

    async def record(
        self,
        lane: Lane,
        provider: str,
        model: str,
        usage: Usage,
        *,
        ok: bool = True,
        cost_usd: float = 0.0,
        saved_usd: float = 0.0,
    ) -> None:
        """Add one call (failed calls count too: they are what escalations are made of)."""
        await self._commits.execute(
            _UPSERT,
            (
                lane.value,
                provider,
                model,
                1,
                0 if ok else 1,
                usage.input_tokens,
                usage.output_tokens,
                cost_usd,
                saved_usd,
            ),
        )

    async def summary(self) -> UsageSummary:
        """Totals per lane, in lane order."""
        async with self._db.execute(
            "SELECT lane, SUM(calls), SUM(failures), SUM(input_tokens), SUM(output_tokens),"
            " SUM(cost_usd), SUM(saved_usd) FROM llm_usage GROUP BY lane"
        ) as cursor:
            rows = {row[0]: row async for row in cursor}
        return UsageSummary(
            tuple(
                LaneUsage(lane.value, *rows[lane.value][1:])
                if lane.value in rows
                else LaneUsage(lane.value)
                for lane in Lane
            )
        )
