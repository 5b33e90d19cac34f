"""Readiness means "can serve the owner": an optional part that is missing degrades Lancelot
but leaves /health/ready at 200; a part it cannot serve without still makes it 503."""

from __future__ import annotations

from pathlib import Path

import aiohttp
import pytest

from bot.app import Lancelot
from tests.fakes.channel import MemoryChannel
from tests.fakes.owner import say


@pytest.fixture
def no_engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Docker client finds no engine where it looks (no sandbox image either, then)."""
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")


@pytest.mark.app(web=True)
async def test_without_the_sandbox_lancelot_is_ready_and_says_what_is_degraded(
    no_engine: None, app: Lancelot
) -> None:
    app.health.mark_ready()
    async with aiohttp.ClientSession() as http:
        response = await http.get(f"{app.web_url}/health/ready")
        body = await response.json()
    assert response.status == 200
    assert body["ready"] is True
    assert body["degraded"] is True
    assert any(reason.startswith("sandbox: ") for reason in body["degraded_reasons"])
    phone = MemoryChannel()
    await app.attach(phone)
    card = await say(app, phone, "/health")
    assert card.title == "Health: ready, degraded"
    assert dict(card.fields)["Ready"] == "yes"


@pytest.mark.app(web=True)
async def test_a_needed_part_down_still_makes_it_unready(no_engine: None, app: Lancelot) -> None:
    app.health.mark_ready()

    async def ledger_down() -> str:
        return "ledger: disk full"

    app.health.register("ledger", ledger_down)
    async with aiohttp.ClientSession() as http:
        response = await http.get(f"{app.web_url}/health/ready")
        body = await response.json()
    assert response.status == 503
    assert body["ready"] is False
    assert "ledger: disk full" in body["degraded_reasons"]


async def test_health_names_the_checks_that_pass_the_sandbox_among_them(app: Lancelot) -> None:
    """ "Every check passes" said nothing of what was checked: the card names each one."""
    app.health.mark_ready()

    async def fine() -> str | None:
        return None

    app.health.register("sandbox", fine, optional=True)
    phone = MemoryChannel()
    await app.attach(phone)
    card = await say(app, phone, "/health")
    passing = card.body.rpartition("Passing: ")[2].rstrip(".").split(", ")
    assert "sandbox" in passing
    assert "ledger" in passing
    assert not set(passing) & set((await app.health.snapshot()).failing)
