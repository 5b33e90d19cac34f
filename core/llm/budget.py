"""Spending caps on the paid models: what today and this month cost, a warning at 80 %, and
at 100 % a refusal (scheduled work pauses; an owner's request asks first, see
core/agent/budget_hold.py). "Allow $N more today" raises today's caps by an allowance."""

from __future__ import annotations

import logging
import time
import zoneinfo
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime

from core.errors import ProviderUnavailable
from core.events import Card, CardKind
from core.llm.prices import PriceTable
from core.llm.spend import SpendBook, SpendRow
from core.llm.types import Usage
from core.receipts.base import ReceiptStore
from core.receipts.model import Receipt

log = logging.getLogger(__name__)

DAILY, MONTHLY = "daily", "monthly"


def money(usd: float) -> str:
    """$0.0042 below a dollar, $12.50 above (a cost of a few tokens still shows)."""
    return f"${usd:,.4f}" if usd < 1 else f"${usd:,.2f}"


def dollars(usd: float) -> str:
    """$0.85: budgets, spend against them, allowances."""
    return f"${usd:,.2f}"


class BudgetReached(ProviderUnavailable):
    """A paid call was refused: a budget is used up (the owner may allow more for today)."""


@dataclass(frozen=True, slots=True)
class BudgetCaps:
    """The budgets in USD (None: no cap), the step "Allow" adds, and the share that warns."""

    daily_usd: float | None = None
    monthly_usd: float | None = None
    step_usd: float | None = None
    warn_at: float = 0.8

    @property
    def capped(self) -> bool:
        """Whether any budget is set."""
        return self.daily_usd is not None or self.monthly_usd is not None

    @property
    def step(self) -> float:
        """What one "Allow" adds: the setting, else 20 % of the daily budget, else $1."""
        if self.step_usd is not None:
            return self.step_usd
        if self.daily_usd is None:
            return 1.0
        return max(round(self.daily_usd * 0.2, 2), 0.01)


@dataclass(frozen=True, slots=True)
class Periods:
    """Today and this month in the owner's timezone: their names and when they began."""

    zone: str
    day: str  # 2026-11-26
    month: str  # 2026-11
    day_start: float
    month_start: float

    @classmethod
    def at(cls, now: float, zone: str) -> Periods:
        """The day and month `now` falls in, in `zone`."""
        local = datetime.fromtimestamp(now, zoneinfo.ZoneInfo(zone))
        day = local.replace(hour=0, minute=0, second=0, microsecond=0)
        month = day.replace(day=1)
        return cls(zone, f"{day:%Y-%m-%d}", f"{day:%Y-%m}", day.timestamp(), month.timestamp())


@dataclass(frozen=True, slots=True)
class BudgetStatus:
    """Spend against the budgets right now."""

    caps: BudgetCaps
    periods: Periods
    spent_today: float
    spent_month: float
    allowance: float  # allowed today on top of both budgets

    def _over(self, which: str) -> bool:
        cap = self.caps.daily_usd if which == DAILY else self.caps.monthly_usd
        spent = self.spent_today if which == DAILY else self.spent_month
        return cap is not None and spent >= cap + self.allowance

    def overspent(self, which: str) -> float:
        """USD spent past that budget and today's allowance (0 when within)."""
        cap = self.caps.daily_usd if which == DAILY else self.caps.monthly_usd
        spent = self.spent_today if which == DAILY else self.spent_month
        return max(0.0, spent - cap - self.allowance) if cap is not None else 0.0

    @property
    def reached(self) -> str | None:
        """DAILY or MONTHLY when that budget (plus today's allowance) is used up, else None."""
        return next((which for which in (DAILY, MONTHLY) if self._over(which)), None)

    def reason(self) -> str:
        """Which budget is used up, in figures (short, safe to show)."""
        which = self.reached
        if which is None:
            return "within budget"
        cap = self.caps.daily_usd if which == DAILY else self.caps.monthly_usd
        spent = self.spent_today if which == DAILY else self.spent_month
        period = "today" if which == DAILY else "this month"
        extra = f" + {dollars(self.allowance)} allowed today" if self.allowance else ""
        return (
            f"the {which} budget for paid models is used up: {dollars(spent)} {period}"
            f" of {dollars(cap or 0)}{extra}"
        )

    def fields(self) -> tuple[tuple[str, str], ...]:
        """What /usage shows of the budgets."""

        def line(cap: float | None, spent: float) -> str:
            if cap is None:
                return f"{dollars(spent)} (no budget)"
            return f"{dollars(spent)} of {dollars(cap)} ({spent / cap:.0%})"

        return (
            ("Spent today", line(self.caps.daily_usd, self.spent_today)),
            ("Spent this month", line(self.caps.monthly_usd, self.spent_month)),
            ("Allowed today", f"{dollars(self.allowance)} more" if self.allowance else "nothing"),
            ("Budget days", f"{self.periods.day} ({self.periods.zone})"),
        )


class Budget:
    """Counts each paid call (an unpriced model at its provider's dearest price), warns once
    per period at `warn_at`, and refuses paid calls once a budget is used up."""

    def __init__(
        self,
        book: SpendBook,
        prices: PriceTable,
        caps: BudgetCaps,
        ledger: ReceiptStore,
        *,
        zone: Callable[[], str] = lambda: "UTC",
        clock: Callable[[], float] = time.time,
        announce: Callable[[Card], Awaitable[object]] | None = None,
    ) -> None:
        self.caps = caps
        self._book = book
        self._prices = prices
        self._ledger = ledger
        self._zone = zone
        self._clock = clock
        self._announce = announce
        self._unpriced: set[str] = set()  # models already named in the log as unpriced

    def prefer_zone(self, chosen: Callable[[], str | None]) -> None:
        """Read days and months in the zone the owner chose in chat, once there is one."""
        fallback = self._zone
        self._zone = lambda: chosen() or fallback()

    async def status(self) -> BudgetStatus:
        """Today's and this month's spend, and today's allowance."""
        periods = Periods.at(self._clock(), self._zone())
        return BudgetStatus(
            self.caps,
            periods,
            await self._book.spent_since(periods.day_start),
            await self._book.spent_since(periods.month_start),
            await self._book.amount(f"allowance:{periods.day}"),
        )

    async def reached(self) -> BudgetStatus | None:
        """The status when a budget is used up (paid calls wait for the owner), else None."""
        if not self.caps.capped:
            return None
        status = await self.status()
        return status if status.reached else None

    async def check(self) -> None:
        """Before a paid call: raise BudgetReached when a budget is used up."""
        status = await self.reached()
        if status is not None:
            reason = status.reason()
            raise BudgetReached(
                reason,
                user_message=f"Paused: {reason}. Send it again to allow more or stay local.",
            )

    async def spent(self, provider: str, model: str, usage: Usage) -> None:
        """After a paid call: count it, and warn the owner when it crossed `warn_at`."""
        price = self._prices.per_million(provider, model)
        priced = price is not None
        if price is None:
            price = self._prices.ceiling(provider)
            key = f"{provider}/{model}"
            level = logging.DEBUG if key in self._unpriced else logging.WARNING
            self._unpriced.add(key)
            log.log(
                level,
                "budget: no price for %s/%s; counted at the dearest listed (%s, %s USD per "
                "million tokens); add it under llm.prices",
                provider,
                model,
                *price,
            )
        cost = (usage.input_tokens * price[0] + usage.output_tokens * price[1]) / 1_000_000
        now = self._clock()
        row = SpendRow(now, provider, model, usage.input_tokens, usage.output_tokens, cost, priced)
        await self._book.record(row)
        if self.caps.capped:
            await self._warn(await self.status())

    async def allow(self, by: str, parent_id: str | None = None) -> BudgetStatus:
        """Raise today's allowance by one step; the receipt says who and how much."""
        status = await self.status()
        step = self.caps.step
        # "N more": first what is already spent past a budget, then the step on top.
        past = max(status.overspent(DAILY), status.overspent(MONTHLY))
        day = status.periods.day
        total = await self._book.add(f"allowance:{day}", past + step, self._clock())
        self._ledger.append(
            Receipt(
                action_type="budget_allowance",
                action_name="allow",
                inputs={"by": by, "step_usd": step},
                outputs={"added_usd": past + step, "allowed_today_usd": total, "day": day},
                parent_id=parent_id,
                quest_id=parent_id,
            )
        )
        return await self.status()

    async def _warn(self, status: BudgetStatus) -> None:
        caps, periods = status.caps, status.periods
        for which, cap, spent, period in (
            (DAILY, caps.daily_usd, status.spent_today, periods.day),
            (MONTHLY, caps.monthly_usd, status.spent_month, periods.month),
        ):
            if cap is None or spent < cap * caps.warn_at:
                continue
            if not await self._book.mark_once(f"warned:{which}:{period}", self._clock()):
                continue  # once per period, even across restarts
            card = _warning_card(which, cap, spent, status)
            self._ledger.append(
                Receipt(
                    action_type="budget_warning",
                    action_name=which,
                    outputs={"spent_usd": spent, "budget_usd": cap, "period": period},
                    metadata={"card_id": card.correlation_id, "warn_at": caps.warn_at},
                )
            )
            if self._announce is not None:
                await self._announce(card)


def _warning_card(which: str, cap: float, spent: float, status: BudgetStatus) -> Card:
    period = "today's" if which == DAILY else "this month's"
    resets = (
        f"at midnight ({status.periods.zone})"
        if which == DAILY
        else f"on the 1st ({status.periods.zone})"
    )
    return Card(
        CardKind.ALERT,
        f"{spent / cap:.0%} of the {which} model budget used",
        f"Paid model calls have cost {dollars(spent)} of {period} {dollars(cap)} budget. When it "
        "is used up, scheduled model work pauses and I ask you before calling a paid model.",
        fields=(
            ("Budget", f"{dollars(cap)} {which}"),
            ("Spent", dollars(spent)),
            ("Resets", resets),
        ),
    )
