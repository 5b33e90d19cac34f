"""The model layer inside the real app: router wired from settings, /usage, /status, health."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.app import assemble
from core.config import load_settings
from core.errors import ProviderUnavailable
from core.llm.types import CompletionRequest, Lane, Message, Role
from tests.ci import require_module
from tests.fakes.channel import MemoryChannel
from tests.fakes.llm import FakeOpenAI, Reply
from tests.fakes.owner import say

ASK = CompletionRequest(messages=(Message(Role.USER, "What's on today?"),))


async def test_usage_shows_tokens_and_cost_and_survives_a_restart(tmp_path: Path) -> None:
    async with FakeOpenAI() as fake:
        env = {
            "LANCELOT_HOME": str(tmp_path / "home"),
            "OPENAI_API_KEY": "test-key-not-real",
            "OPENAI_BASE_URL": fake.base_url,
        }
        fake.reply(Reply(text="Nothing much.", input_tokens=1200, output_tokens=300))
        async with assemble(load_settings(environ=env), web=False) as app:
            assert app.models is not None
            assert app.models.has_flagship()
            answer = await app.models.complete(ASK, task_type="answer")
            assert answer.text == "Nothing much."
            assert fake.models_called() == ["gpt-4o-mini"]  # the settings' fast model
        async with assemble(load_settings(environ=env), web=False) as app:
            phone = MemoryChannel()
            await app.attach(phone)
            card = await say(app, phone, "/usage")
            fields = dict(card.fields)
            assert fields["flagship_fast"] == "1 calls, 1,500 tokens, $0.0004"
            assert fields["local_utility"] == "not used"
            assert fields["Flagship cost"] == "$0.0004"  # 1200 x 0.15 + 300 x 0.60 per million
            assert "openai" in card.body
            assert "/usage" in (await say(app, phone, "/help")).body
            status = dict((await say(app, phone, "/status")).fields)
            assert status["Models"].startswith("openai")
            assert "loads on first use" in status["Models"] or "no local model" in status["Models"]


async def test_without_a_key_lancelot_still_runs_and_says_what_to_set(tmp_path: Path) -> None:
    env = {"LANCELOT_HOME": str(tmp_path / "home"), "LANCELOT_PROVIDER": "anthropic"}
    async with assemble(load_settings(environ=env), web=False) as app:
        assert app.models is not None
        assert not app.models.has_flagship()
        with pytest.raises(ProviderUnavailable) as caught:
            await app.models.complete(ASK, task_type="answer", lane=Lane.FLAGSHIP_FAST)
        assert "ANTHROPIC_API_KEY is not set" in caught.value.user_message
        assert "LANCELOT_PROVIDER" in caught.value.user_message
        snapshot = await app.health.check()
        assert any("ANTHROPIC_API_KEY" in reason for reason in snapshot.degraded_reasons)
        phone = MemoryChannel()
        await app.attach(phone)
        assert (await say(app, phone, "/status")).title == "Status"


async def test_the_local_model_switch_and_nothing_loads_at_startup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = {"LANCELOT_HOME": str(tmp_path / "home")}
    async with assemble(load_settings(environ=env), web=False) as app:
        assert app.models is not None
        assert not app.models.has_local()  # FEATURE_LOCAL_MODEL=false (tests/conftest.py)
    require_module("llama_cpp", needs="the local extra (pip install -e '.[local]')")
    monkeypatch.setenv("FEATURE_LOCAL_MODEL", "true")
    async with assemble(load_settings(environ=env), web=False) as app:
        assert app.models is not None
        assert app.models.has_local()
        assert not app.models.local_ready()  # it loads on first use, never at startup
    assert not (tmp_path / "home" / "models").exists()  # nor is it assembled then


async def test_health_says_whether_the_local_model_is_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_module("llama_cpp", needs="the local extra (pip install -e '.[local]')")
    gguf = tmp_path / "model.gguf"
    env = {"LANCELOT_HOME": str(tmp_path / "home"), "LANCELOT_LOCAL_MODEL": str(gguf)}
    monkeypatch.setenv("FEATURE_LOCAL_MODEL", "true")
    async with assemble(load_settings(environ=env), web=False) as app:
        snapshot = await app.health.check()
        assert snapshot.local_llm_ready is False
        assert f"local model: LANCELOT_LOCAL_MODEL {gguf} is not a file" in (
            snapshot.degraded_reasons
        )
        phone = MemoryChannel()
        await app.attach(phone)
        assert ("Local model", "down") in (await say(app, phone, "/health")).fields
        gguf.write_bytes(b"GGUF")  # put in place later: usable, loaded at its first use
        assert (await app.health.check()).local_llm_ready is True
        assert ("Local model", "ready") in (await say(app, phone, "/health")).fields
    monkeypatch.setenv("FEATURE_LOCAL_MODEL", "false")
    async with assemble(load_settings(environ=env), web=False) as app:
        assert (await app.health.check()).local_llm_ready is None
