"""The spending budget: its settings, its days and months, how an unpriced model counts, and
the router refusing a paid call once a budget is used up (OpenAI's real SDK at its fake)."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from core.config import load_settings
from core.delivery.writer import StateWriter
from core.errors import ConfigError
from core.llm.budget import Budget, BudgetCaps, BudgetReached, Periods
from core.llm.prices import PriceTable
from core.llm.providers import build_provider
from core.llm.redaction import PiiRedactor
from core.llm.router import Flagship, Router
from core.llm.spend import SpendBook
from core.llm.types import CompletionRequest, Lane, Message, Role, Usage
from core.llm.usage import UsageBook
from core.receipts.base import ReceiptQuery
from core.receipts.ledger import SqliteLedger
from core.state import open_state_db
from tests.fakes.llm import FakeOpenAI, Reply
from tests.fakes.llm.wiring import FAST, config_for

PRICES = PriceTable.with_overrides({"openai/fast-model": (1000.0, 1000.0)})  # $0.001 a token
NOON = datetime(2026, 11, 23, 12, 0, tzinfo=UTC).timestamp()


@pytest.mark.parametrize("name", ["LANCELOT_BUDGET_DAILY_USD", "LANCELOT_BUDGET_MONTHLY_USD"])
@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("-5", "Input should be greater than 0 (got '-5')"),
        ("0", "Input should be greater than 0 (got '0')"),
        ("ten", "Input should be a valid number"),
        ("nan", "Input should be a finite number"),
    ],
)
def test_a_bad_budget_names_its_variable(name: str, value: str, problem: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(environ={name: value})
    assert str(caught.value).startswith(f"environment variable {name} (sets budget.")
    assert problem in str(caught.value)


def test_budgets_are_unset_by_default_and_read_from_the_environment() -> None:
    assert not _caps({}).capped
    caps = _caps({"LANCELOT_BUDGET_DAILY_USD": "2.5", "LANCELOT_BUDGET_MONTHLY_USD": "40"})
    assert (caps.daily_usd, caps.monthly_usd, caps.step) == (2.5, 40.0, 0.5)  # 20 % a step
    stepped = _caps({"LANCELOT_BUDGET_DAILY_USD": "5", "LANCELOT_BUDGET_ALLOW_STEP_USD": "2"})
    assert stepped.step == 2.0


def _caps(environ: dict[str, str]) -> BudgetCaps:
    budget = load_settings(environ=environ).budget
    return BudgetCaps(budget.daily_usd, budget.monthly_usd, budget.allow_step_usd)


def test_the_allow_step() -> None:
    assert BudgetCaps(daily_usd=5).step == 1.0
    assert BudgetCaps(monthly_usd=50).step == 1.0  # no daily budget: $1
    assert BudgetCaps(daily_usd=5, step_usd=2).step == 2.0


def test_days_and_months_are_the_owners() -> None:
    late = datetime(2026, 11, 30, 23, 30, tzinfo=UTC).timestamp()
    assert (Periods.at(late, "UTC").day, Periods.at(late, "UTC").month) == ("2026-11-30", "2026-11")
    berlin = Periods.at(late, "Europe/Berlin")  # already 00:30 on 1 December there
    assert (berlin.day, berlin.month) == ("2026-12-01", "2026-12")
    assert berlin.day_start == datetime(2026, 11, 30, 23, 0, tzinfo=UTC).timestamp()
    assert berlin.month_start == berlin.day_start


@dataclass
class Bench:
    router: Router
    budget: Budget
    fake: FakeOpenAI
    ledger: SqliteLedger
    clock: list[float]
    writer: StateWriter
    usage: UsageBook


@pytest.fixture
async def bench(tmp_path: Path) -> AsyncIterator[Bench]:
    async with AsyncExitStack() as stack:
        fake = await stack.enter_async_context(FakeOpenAI())
        ledger = await stack.enter_async_context(SqliteLedger(tmp_path / "ledger.db"))
        state = await open_state_db(tmp_path / "state.db")
        stack.push_async_callback(state.close)
        # As in the app: each paid call's additions go through state.db's group commit.
        writer = await stack.enter_async_context(StateWriter(tmp_path / "state.db"))
        usage, spend = UsageBook(state, writer=writer), SpendBook(state, writer=writer)
        await usage.setup()
        await spend.setup(NOON)
        clock = [NOON]
        caps = BudgetCaps(daily_usd=1.0, monthly_usd=3.0)
        budget = Budget(spend, PRICES, caps, ledger, clock=lambda: clock[0])
        config = config_for("openai", fake)
        provider = build_provider(config)
        stack.push_async_callback(provider.aclose)  # type: ignore[attr-defined]
        router = Router(
            ledger=ledger,
            usage=usage,
            prices=PRICES,
            redactor=PiiRedactor(),
            flagship=Flagship(provider, config),
            budget=budget,
        )
        yield Bench(router, budget, fake, ledger, clock, writer, usage)


def ask(text: str) -> CompletionRequest:
    return CompletionRequest(messages=(Message(Role.USER, text),))


async def test_a_paid_calls_usage_and_spend_are_one_commit(bench: Bench) -> None:
    bench.fake.reply(Reply(text="one", input_tokens=30, output_tokens=20))
    before = bench.writer.commits
    await bench.router.complete(ask("hello"), task_type="chat")
    assert (bench.writer.commits - before, bench.writer.writes) == (1, 2)
    assert (await bench.budget.status()).spent_today == pytest.approx(0.05)
    fast = (await bench.usage.summary()).lane(Lane.FLAGSHIP_FAST)
    assert (fast.calls, fast.tokens) == (1, 50)


async def test_a_used_up_budget_refuses_paid_calls_until_the_next_day(bench: Bench) -> None:
    bench.fake.reply(Reply(text="one", input_tokens=600, output_tokens=400))
    await bench.router.complete(ask("hello"), task_type="chat")
    assert (await bench.budget.status()).spent_today == pytest.approx(1.0)
    with pytest.raises(BudgetReached) as caught:
        await bench.router.complete(ask("hello again"), task_type="chat")
    assert "the daily budget for paid models is used up: $1.00 today of $1.00" in str(caught.value)
    assert len(bench.fake.requests) == 1  # the refused call never left the machine
    await bench.ledger.flush()
    page = await bench.ledger.page(ReceiptQuery(action_type="router_decision"))
    refused = json.loads(page.receipts[0].metadata)
    assert refused["rationale"] == "over budget"
    bench.clock[0] += 86400  # a new day: the daily budget is fresh, the month counts on
    bench.fake.reply(Reply(text="two", input_tokens=10, output_tokens=0))
    assert (await bench.router.complete(ask("next day"), task_type="chat")).text == "two"
    status = await bench.budget.status()
    assert status.spent_today == pytest.approx(0.01)
    assert status.spent_month == pytest.approx(1.01)


async def test_an_allowance_lets_exactly_that_much_more_through_today(bench: Bench) -> None:
    bench.fake.reply(Reply(text="big", input_tokens=1300, output_tokens=0))
    await bench.router.complete(ask("hello"), task_type="chat")  # $1.30: $0.30 past the budget
    status = await bench.budget.allow("owner")
    assert status.allowance == pytest.approx(0.5)  # the $0.30 past it, then the $0.20 step
    assert status.reached is None
    bench.fake.reply(Reply(text="ok", input_tokens=200, output_tokens=0))
    await bench.router.complete(ask("more"), task_type="chat")
    with pytest.raises(BudgetReached):
        await bench.router.complete(ask("and more"), task_type="chat")
    bench.clock[0] += 86400  # the allowance was for that day only
    assert (await bench.budget.status()).allowance == 0


async def test_an_unpriced_model_counts_at_its_providers_dearest_price(
    bench: Bench, caplog: pytest.LogCaptureFixture
) -> None:
    dearest = PRICES.ceiling("openai")
    assert dearest == (1000.0, 1000.0)
    with caplog.at_level(logging.WARNING, logger="core.llm.budget"):
        await bench.budget.spent("openai", "gpt-unknown-9", Usage(100, 0))
    assert (await bench.budget.status()).spent_today == pytest.approx(0.1)
    assert "no price for openai/gpt-unknown-9; counted at the dearest listed" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="core.llm.budget"):
        await bench.budget.spent("openai", "gpt-unknown-9", Usage(100, 0))
    assert caplog.text == ""  # named once at WARNING, not at every call
    assert (await bench.budget.status()).spent_today == pytest.approx(0.2)
    # A provider with no listed price at all counts at the dearest price of any.
    assert PriceTable({"a/x": (1.0, 9.0), "b/y": (3.0, 2.0)}).ceiling("c") == (3.0, 9.0)
    assert PRICES.per_million("openai", FAST) == (1000.0, 1000.0)
