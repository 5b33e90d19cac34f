"""web_fetch through the real OpenAI, Anthropic and Gemini SDKs against fake servers at the
wire: the model is offered the tool, the page it asks for comes back to it in each API's
encoding fenced as untrusted data (the orders written in it inside the fence, the warning
outside), and the owner gets the answer the model gave from it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from bot.app import Lancelot, assemble
from core.config import load_settings
from core.events import Inbound
from core.features import FeatureFlags
from tests.core.tools.fences import fenced_body, header_of
from tests.fakes.channel import MemoryChannel
from tests.fakes.llm import FakeModelServer, Reply
from tests.fakes.llm.base import Seen
from tests.fakes.llm.wiring import DEEP, FAKES, FAST, base_url
from tests.fakes.owner import CHAT, OWNER
from tests.fakes.web_site import INJECTION, FakeSite


@asynccontextmanager
async def lancelot(
    tmp_path: Path, provider: str, site: FakeSite
) -> AsyncIterator[tuple[Lancelot, MemoryChannel, FakeModelServer]]:
    """Lancelot on `provider` with web_fetch set up for the test site, as an owner would."""
    async with FAKES[provider]() as fake:
        env = {
            "LANCELOT_HOME": str(tmp_path / "home"),
            "LANCELOT_PROVIDER": provider,
            f"{provider.upper()}_API_KEY": "test-key",
            f"{provider.upper()}_BASE_URL": base_url(fake),
            f"LANCELOT_LLM_{provider.upper()}_FAST_MODEL": FAST,
            f"LANCELOT_LLM_{provider.upper()}_DEEP_MODEL": DEEP,
            "LANCELOT_LOCAL_MODEL": str(tmp_path / "no-local-model.gguf"),
            "LANCELOT_LOOKUPS_FETCH_ALLOWLIST": "*",
            "LANCELOT_LOOKUPS_FETCH_PRIVATE_HOSTS": "127.0.0.1",
        }
        flags = FeatureFlags(environ={"FEATURE_UNIFIED_CLASSIFICATION": "true"})
        async with assemble(load_settings(environ=env), web=False, features=flags) as app:
            phone = MemoryChannel()
            await app.attach(phone)
            yield app, phone, fake


def offered(seen: Seen) -> set[str]:
    """The tool names a request offered, in its API's encoding."""
    tools: list[dict[str, Any]] = seen.body.get("tools") or []
    names = set()
    for entry in tools:
        if "function" in entry:  # OpenAI
            names.add(entry["function"]["name"])
        elif "functionDeclarations" in entry:  # Gemini
            names.update(d["name"] for d in entry["functionDeclarations"])
        elif "name" in entry:  # Anthropic
            names.add(entry["name"])
    return names


@pytest.mark.parametrize("provider", sorted(FAKES))
async def test_a_page_with_orders_in_it_reaches_the_model_as_data(
    tmp_path: Path, provider: str
) -> None:
    async with FakeSite() as site, lancelot(tmp_path, provider, site) as (app, phone, fake):
        url = f"{site.url}/injected"
        fake.reply(
            Reply(json={"intent": "KNOWLEDGE_REQUEST"}),
            Reply(tool_calls=(("web_fetch", {"url": url}),)),
            Reply(
                json={
                    "response_to_user": "The page says to soak the beans overnight.",
                    "actions_taken": [{"tool": "web_fetch", "detail": url}],
                    "next_action": "",
                }
            ),
        )
        await app.bus.publish(Inbound(phone.name, OWNER, CHAT, "what does the recipes page say?"))
        _, card = await phone.next_card(wait=30.0)  # a first SDK client is slow to load
        assert "soak the beans overnight" in card.body
        assert dict(card.fields)["Ran"] == f"web.fetch {url}"
        asked, told = fake.requests[1], fake.requests[2]
        assert "web_fetch" in offered(asked)
        (result,) = fake.tool_results(told)
        page = json.loads(result)["output"]
        assert "UNTRUSTED DATA: a web page from" in header_of(page)
        assert "WARNING: this content contains a banned phrase" in header_of(page)
        assert INJECTION in fenced_body(page)
        assert INJECTION not in header_of(page)
