"""/usage: tokens per lane, what the flagship cost, what the local lanes saved, and the
spending budgets (today's and this month's spend, today's allowance)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from core.commands.registry import CommandContext, CommandRegistry, Router
from core.events import Card, CardKind
from core.llm.budget import Budget
from core.llm.budget import money as _money
from core.llm.types import Lane
from core.llm.usage import LaneUsage, UsageBook


def _lane_line(usage: LaneUsage) -> str:
    if not usage.calls:
        return "not used"
    failed = f", {usage.failures} failed" if usage.failures else ""
    cost = f", {_money(usage.cost_usd)}" if usage.lane.startswith("flagship") else ""
    return f"{usage.calls} calls{failed}, {usage.tokens:,} tokens{cost}"


@dataclass
class UsageCommand:
    """Registers /usage; `describe_models` names the configured providers for the card."""

    registry: CommandRegistry
    book: UsageBook
    describe_models: Callable[[], str]
    budget: Budget | None = field(default=None)

    def register(self) -> None:
        """Add /usage to the registry."""
        router = Router("usage")
        router.command("usage", "model tokens, cost and local savings", self.usage)
        self.registry.include(router)

    async def usage(self, ctx: CommandContext) -> Card:
        """The totals since the first model call (they survive restarts)."""
        summary = await self.book.summary()
        fields = tuple((lane.value, _lane_line(summary.lane(lane))) for lane in Lane)
        fields += (
            ("Flagship cost", _money(summary.cost_usd)),
            ("Saved by local", _money(summary.saved_usd)),
            ("Tokens in all", f"{summary.tokens:,}"),
        )
        if self.budget is not None:
            fields += (await self.budget.status()).fields()
        return Card(
            kind=CardKind.REPLY,
            title="Model usage",
            body=self.describe_models(),
            fields=fields,
        )
