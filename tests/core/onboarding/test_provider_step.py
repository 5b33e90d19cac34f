"""The provider step checks each key live with a tiny call through the provider's own SDK
(against the wire fakes), offers the ones that answered, and the owner's choice is what the
router thinks with, now and after a restart, over LANCELOT_PROVIDER."""

from __future__ import annotations

import json
from pathlib import Path

from bot.app import Lancelot, assemble
from core.config import load_settings
from core.llm.key_check import KeyProblem, check_key
from core.llm.router import Router
from tests.fakes.channel import MemoryChannel
from tests.fakes.llm import FakeAnthropic, FakeOpenAI, Reply
from tests.fakes.owner import say, tap


def _flagship(app: Lancelot) -> str | None:
    assert isinstance(app.models, Router)
    return app.models.flagship_name


async def test_a_good_key_and_a_refused_one(tmp_path: Path) -> None:
    async with FakeOpenAI() as openai, FakeAnthropic() as anthropic:
        env = {
            "LANCELOT_HOME": str(tmp_path / "home"),
            "LANCELOT_PROVIDER": "anthropic",
            "OPENAI_API_KEY": "test-key-not-real",
            "OPENAI_BASE_URL": openai.base_url,
            "ANTHROPIC_API_KEY": "test-key-not-real",
            "ANTHROPIC_BASE_URL": anthropic.base_url,
        }
        settings = load_settings(environ=env)
        async with assemble(settings, web=False) as app:
            assert _flagship(app) == "anthropic"
            phone = MemoryChannel()
            await app.attach(phone)
            await say(app, phone, "/start")
            anthropic.fail_next(401)
            card = await say(app, phone, "Ana", wait=30)
            checks = dict(card.fields)
            assert checks["openai"].startswith("✓ gpt-4o-mini answered at 127.0.0.1")
            assert checks["anthropic"].startswith("✗ 127.0.0.1")
            assert "refused the key" in checks["anthropic"]
            assert [b.label for b in card.buttons] == ["Use openai", "Continue"]
            assert openai.models_called() == ["gpt-4o-mini"]  # one tiny call
            assert openai.requests[0].body["max_tokens"] == 1
            await tap(app, phone, card, "Use openai")
            _, timezone = await phone.next_card()
            assert timezone.title == "Step 3 of 4: your timezone"
            assert _flagship(app) == "openai"  # used at once
            status = await say(app, phone, "STATUS")
            assert dict(status.fields)["Model"] == "openai"
        async with assemble(settings, web=False) as app:
            assert _flagship(app) == "openai"  # the saved choice wins


async def test_a_provider_typed_by_name_is_checked_again(tmp_path: Path) -> None:
    async with FakeOpenAI() as openai:
        env = {
            "LANCELOT_HOME": str(tmp_path / "home"),
            "OPENAI_API_KEY": "test-key-not-real",
            "OPENAI_BASE_URL": openai.base_url,
        }
        async with assemble(load_settings(environ=env), web=False) as app:
            phone = MemoryChannel()
            await app.attach(phone)
            await say(app, phone, "/start")
            await say(app, phone, "Ana", wait=30)
            assert "'gemini' is not a provider with a key" in (await say(app, phone, "gemini")).body
            openai.fail_next(401)
            refused = await say(app, phone, "openai", wait=30)
            assert "openai's key did not answer" in refused.body
            assert (await say(app, phone, "OpenAI", wait=30)).title == "Step 3 of 4: your timezone"


async def test_check_key_says_what_went_wrong(tmp_path: Path) -> None:
    async with FakeOpenAI() as openai:
        env = {"OPENAI_API_KEY": "test-key-not-real", "OPENAI_BASE_URL": openai.base_url}
        llm = load_settings(environ={"LANCELOT_HOME": str(tmp_path), **env}).llm
        good = await check_key(llm, "openai")
        assert good.ok
        openai.fail_next(401)
        refused = await check_key(llm, "openai")
        assert refused.problem is KeyProblem.REFUSED
        assert "test-key-not-real" not in refused.detail
    missing = await check_key(llm, "gemini")
    assert (missing.problem, missing.detail) == (KeyProblem.MISSING, "GEMINI_API_KEY is not set")
    gone = await check_key(llm, "openai", limit=2)  # the fake has stopped
    assert gone.problem is KeyProblem.UNREACHABLE


async def test_the_agent_is_told_the_name(tmp_path: Path) -> None:
    async with FakeOpenAI() as openai:
        env = {
            "LANCELOT_HOME": str(tmp_path / "home"),
            "OPENAI_API_KEY": "test-key-not-real",
            "OPENAI_BASE_URL": openai.base_url,
        }
        async with assemble(load_settings(environ=env), web=False) as app:
            phone = MemoryChannel()
            await app.attach(phone)
            await say(app, phone, "/start")
            await say(app, phone, "Ana", wait=30)
            await say(app, phone, "skip")
            checks = len(openai.requests)
            openai.reply(Reply(text="Hello Ana."))
            answer = await say(app, phone, "hello, who am I?", wait=30)
            assert "Hello Ana." in answer.body
            sent = json.dumps([r.body for r in openai.requests[checks:]])
            assert "Call the owner Ana." in sent
