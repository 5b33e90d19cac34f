"""The router over a real ledger and state.db, with a flagship's real SDK against its fake."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from core.errors import ProviderUnavailable
from core.llm.intent import Intent, classify_intent
from core.llm.prices import PriceTable
from core.llm.providers import build_provider
from core.llm.redaction import PiiRedactor
from core.llm.router import Flagship, Router
from core.llm.types import (
    Completion,
    CompletionRequest,
    ContextNote,
    Lane,
    Message,
    ModelRouter,
    Role,
)
from core.llm.usage import UsageBook
from core.receipts.base import ReceiptQuery
from core.receipts.ledger import SqliteLedger
from core.receipts.model import StoredReceipt
from core.receipts.redaction import Redactor
from core.state import open_state_db
from tests.fakes.llm import FakeOpenAI, Reply
from tests.fakes.llm.wiring import DEEP, FAST, config_for

PRICES = PriceTable.with_overrides(
    {"openai/fast-model": (1.0, 2.0), "openai/deep-model": (5.0, 15.0)}
)


def ask(text: str) -> CompletionRequest:
    return CompletionRequest(messages=(Message(Role.SYSTEM, "Be brief."), Message(Role.USER, text)))


@dataclass
class Bench:
    router: Router
    fake: FakeOpenAI
    ledger: SqliteLedger
    book: UsageBook

    async def decisions(self) -> list[StoredReceipt]:
        await self.ledger.flush()
        page = await self.ledger.page(ReceiptQuery(action_type="router_decision", limit=50))
        return list(reversed(page.receipts))  # oldest first


@pytest.fixture
async def bench(tmp_path: Path) -> AsyncIterator[Bench]:
    async with AsyncExitStack() as stack:
        fake = await stack.enter_async_context(FakeOpenAI())
        ledger = await stack.enter_async_context(SqliteLedger(tmp_path / "ledger.db"))
        state = await open_state_db(tmp_path / "state.db")
        stack.push_async_callback(state.close)
        book = UsageBook(state)
        await book.setup()
        config = config_for("openai", fake)
        provider = build_provider(config)
        stack.push_async_callback(provider.aclose)  # type: ignore[attr-defined]
        router = Router(
            ledger=ledger,
            usage=book,
            prices=PRICES,
            redactor=PiiRedactor(Redactor(["configured-secret-value"])),
            flagship=Flagship(provider, config),
        )
        yield Bench(router, fake, ledger, book)


def test_the_router_is_what_the_agent_loop_expects(bench: Bench) -> None:
    router: ModelRouter = bench.router  # checked by mypy in the wiring too
    assert router.has_flagship()


async def test_a_fast_call_is_receipted_with_tokens_and_cost(bench: Bench) -> None:
    bench.fake.reply(Reply(text="Done.", input_tokens=1000, output_tokens=500))
    answer = await bench.router.complete(
        ask("Summarise my day"), task_type="answer", parent_id="p1", quest_id="q1"
    )
    assert answer.text == "Done."
    assert bench.fake.models_called() == [FAST]
    (decision,) = await bench.decisions()
    meta = json.loads(decision.metadata)
    assert decision.status == "success"
    assert decision.action_name == "answer"
    assert decision.token_count == 1500
    assert (decision.parent_id, decision.quest_id) == ("p1", "q1")
    assert meta["lane"] == "flagship_fast"
    assert meta["provider"] == "openai"
    assert meta["model"] == FAST
    assert meta["cost_usd"] == pytest.approx((1000 * 1.0 + 500 * 2.0) / 1e6)
    assert decision.duration_ms is not None


async def test_what_memory_put_in_the_prompt_is_on_the_receipt_by_id(bench: Bench) -> None:
    bench.fake.reply(Reply(text="It is atlas."))
    bench.fake.reply(Reply(text="Hello."))
    note = ContextNote(item_ids=("fact-7", "turn-3"), tokens=42)
    remembered = replace(ask("What is my server called?"), context=note)
    await bench.router.complete(remembered, task_type="agent")
    await bench.router.complete(ask("hello"), task_type="agent")
    held, bare = (json.loads(d.metadata) for d in await bench.decisions())
    assert held["context_compiled"] == {"item_ids": ["fact-7", "turn-3"], "tokens_used": 42}
    assert "context_compiled" not in bare


async def test_a_failed_fast_call_escalates_to_deep(bench: Bench) -> None:
    bench.fake.go_down(model=FAST)
    bench.fake.reply(Reply(text="Deep answer."))
    answer = await bench.router.complete(ask("Summarise my day"), task_type="answer")
    assert answer.text == "Deep answer."
    assert bench.fake.models_called() == [FAST, FAST, FAST, DEEP]
    fast, deep = await bench.decisions()
    assert (fast.status, json.loads(fast.metadata)["lane"]) == ("failure", "flagship_fast")
    assert fast.error_message
    assert (deep.status, json.loads(deep.metadata)["lane"]) == ("success", "flagship_deep")
    assert "fast call failed" in json.loads(deep.metadata)["rationale"]


async def test_a_risky_request_goes_deep_at_once(bench: Bench) -> None:
    await bench.router.complete(ask("Delete the production database backups"), task_type="answer")
    assert bench.fake.models_called() == [DEEP]
    (decision,) = await bench.decisions()
    assert "risk keyword 'delete'" in json.loads(decision.metadata)["rationale"]


async def test_a_multi_step_request_goes_deep(bench: Bench) -> None:
    text = "Fetch the report, then sort it by date, then write a summary, finally mail it"
    await bench.router.complete(ask(text), task_type="answer")
    assert bench.fake.models_called() == [DEEP]


async def test_when_both_lanes_are_down_the_owner_gets_a_clear_error(bench: Bench) -> None:
    bench.fake.go_down()
    with pytest.raises(ProviderUnavailable) as caught:
        await bench.router.complete(ask("Summarise my day"), task_type="answer")
    assert "openai" in caught.value.user_message
    assert [json.loads(d.metadata)["lane"] for d in await bench.decisions()] == [
        "flagship_fast",
        "flagship_deep",
    ]


async def test_personal_data_and_secrets_never_reach_the_flagship(bench: Bench) -> None:
    text = (
        "Email jane.doe@example.org or call +44 20 7946 0958 about card 4111 1111 1111 1111; "
        "the key is configured-secret-value and password=hunter22"
    )
    await bench.router.complete(ask(text), task_type="answer")
    wire = json.dumps(bench.fake.requests[-1].body)
    for private in (
        "jane.doe@example.org",
        "7946 0958",
        "4111 1111",
        "configured-secret",
        "hunter22",
    ):
        assert private not in wire
    for mask in ("[EMAIL]", "[PHONE]", "[CARD]"):
        assert mask in wire
    (decision,) = await bench.decisions()
    assert json.loads(decision.metadata)["redactions"] >= 4


async def test_the_redaction_lane_masks_locally(bench: Bench) -> None:
    answer = await bench.router.complete(
        ask("mail me at a.b@example.com"), task_type="redact", lane=Lane.LOCAL_REDACTION
    )
    assert answer.text == "mail me at [EMAIL]"
    assert bench.fake.requests == []  # nothing left the machine


async def test_usage_adds_up_per_lane_and_survives_a_restart(bench: Bench, tmp_path: Path) -> None:
    bench.fake.reply(Reply(text="a", input_tokens=100, output_tokens=10))
    bench.fake.reply(Reply(text="b", input_tokens=200, output_tokens=20))
    await bench.router.complete(ask("one"), task_type="answer")
    await bench.router.complete(ask("two"), task_type="answer", lane=Lane.FLAGSHIP_DEEP)
    reopened = await open_state_db(tmp_path / "state.db")
    try:
        summary = await UsageBook(reopened).summary()
    finally:
        await reopened.close()
    fast, deep = summary.lane(Lane.FLAGSHIP_FAST), summary.lane(Lane.FLAGSHIP_DEEP)
    assert (fast.calls, fast.tokens, deep.calls, deep.tokens) == (1, 110, 1, 220)
    assert summary.cost_usd == pytest.approx((100 + 20) / 1e6 + (200 * 5 + 20 * 15) / 1e6)


class _LocalStub:
    """A stand-in for the local provider (the real one is tested on the real model)."""

    name = "local"

    async def complete(self, request: CompletionRequest) -> Completion:
        from core.llm.types import Usage

        return Completion(text='"CONVERSATIONAL"', usage=Usage(300, 4), model="tiny.gguf")


async def test_local_calls_count_what_they_saved(bench: Bench) -> None:
    router = Router(
        ledger=bench.ledger,
        usage=bench.book,
        prices=PRICES,
        redactor=PiiRedactor(),
        local=_LocalStub(),
        flagship=bench.router._flagship,
    )
    assert router.has_local()
    await router.complete(ask("hi"), task_type="intent", lane=Lane.LOCAL_UTILITY)
    summary = await bench.book.summary()
    assert summary.lane(Lane.LOCAL_UTILITY).tokens == 304
    assert summary.saved_usd == pytest.approx((300 * 1.0 + 4 * 2.0) / 1e6)
    assert summary.cost_usd == 0


async def test_without_a_flagship_the_answer_names_the_setting(bench: Bench) -> None:
    router = Router(
        ledger=bench.ledger,
        usage=bench.book,
        prices=PRICES,
        redactor=PiiRedactor(),
        no_flagship_reason="no provider key is set",
    )
    assert not router.has_flagship()
    assert not router.has_local()
    with pytest.raises(ProviderUnavailable) as caught:
        await router.complete(ask("Write me a poem"), task_type="answer")
    assert "LANCELOT_PROVIDER" in caught.value.user_message
    assert "OPENAI_API_KEY" in caught.value.user_message
    with pytest.raises(ProviderUnavailable):
        await router.complete(ask("hi"), task_type="intent", lane=Lane.LOCAL_UTILITY)


async def test_unified_classification_uses_a_structured_flagship_call(bench: Bench) -> None:
    bench.fake.reply(Reply(json={"intent": "PLAN_REQUEST"}))
    result = await classify_intent(
        "Sort out my inbox", bench.router, lane=Lane.FLAGSHIP_FAST, quest_id="q2"
    )
    assert (result.intent, result.source) == (Intent.PLAN_REQUEST, "flagship_fast")
    sent = bench.fake.requests[-1].body["response_format"]["json_schema"]["schema"]
    assert sent["properties"]["intent"]["enum"] == [i.value for i in Intent]
