"""No engine, or no image: shell commands fail clearly (or run in SafeREPL), health says why."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.app import Lancelot, assemble
from core.config import load_settings
from core.features import FeatureFlags
from core.receipts.base import ReceiptQuery
from core.tools.sandbox import DockerEngine
from tests.fakes.channel import MemoryChannel
from tests.fakes.owner import say


@pytest.fixture
def no_engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Docker client finds no engine where it looks."""
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")


@pytest.fixture
def app_without_engine(no_engine: None, app: Lancelot) -> Lancelot:
    return app


async def test_a_shell_command_fails_with_a_clear_message(app_without_engine: Lancelot) -> None:
    app = app_without_engine
    phone = MemoryChannel()
    await app.attach(phone)
    card = await say(app, phone, "/run uname -a")
    assert "the sandbox engine is not reachable" in card.body
    assert "no-engine.sock" in card.body
    await app.ledger.flush()
    page = await app.ledger.page(ReceiptQuery(action_type="tool_run", limit=10))
    [receipt] = page.receipts
    assert receipt.status == "failure"
    assert "not reachable" in (receipt.error_message or "")


async def test_safe_repl_commands_still_run_and_say_where(app_without_engine: Lancelot) -> None:
    app = app_without_engine
    phone = MemoryChannel()
    await app.attach(phone)
    (app.home / "workspace" / "notes.txt").write_text("hello")
    card = await say(app, phone, "/run ls /workspace")
    assert "exit 0" in card.body
    assert "notes.txt" in card.body
    assert "(ran on safe_repl; skipped docker: the sandbox engine is not reachable" in card.body
    await app.ledger.flush()
    page = await app.ledger.page(ReceiptQuery(action_type="tool_run", limit=10))
    assert [r.decoded("metadata")["runner"] for r in page.receipts] == ["safe_repl"]


async def test_health_names_the_engine(app_without_engine: Lancelot) -> None:
    snapshot = await app_without_engine.health.check()
    sandbox = [r for r in snapshot.degraded_reasons if r.startswith("sandbox:")]
    where = f"unix://{app_without_engine.home.parent}/no-engine.sock"
    assert sandbox == [
        f"sandbox: the sandbox engine is not reachable: no Docker engine answers at {where}"
    ]


async def test_a_missing_image_tells_the_owner_to_build_it(
    tmp_path: Path, docker_image: str
) -> None:
    settings = load_settings(
        environ={
            "LANCELOT_HOME": str(tmp_path / "home"),
            "LANCELOT_SANDBOX_IMAGE": "lancelot-sandbox:not-built-here",
        }
    )
    async with assemble(settings, web=False) as app:
        phone = MemoryChannel()
        await app.attach(phone)
        card = await say(app, phone, "/run uname -a")
        snapshot = await app.health.check()
    assert "lancelot-sandbox:not-built-here is missing" in card.body
    assert "run `lancelot sandbox build`" in card.body
    assert any("lancelot sandbox build" in r for r in snapshot.degraded_reasons)


async def test_with_host_execution_on_the_host_shell_stands_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    monkeypatch.setenv("FEATURE_TOOLS_HOST_EXECUTION", "true")
    settings = load_settings(environ={"LANCELOT_HOME": str(tmp_path / "home")})
    async with assemble(settings, web=False, features=FeatureFlags()) as app:
        phone = MemoryChannel()
        await app.attach(phone)
        card = await say(app, phone, "/run uname -s")
        await app.ledger.flush()
        page = await app.ledger.page(ReceiptQuery(action_type="tool_run", limit=10))
    assert "exit 0\nLinux" in card.body
    assert "(ran on host; skipped docker: the sandbox engine is not reachable" in card.body
    assert [r.decoded("metadata")["runner"] for r in page.receipts] == ["host"]


def test_a_docker_host_the_sdk_cannot_use_reads_as_unreachable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DOCKER_HOST", "bogus://nowhere")
    reason = DockerEngine().usable("lancelot-sandbox:any")
    assert reason == (
        "the sandbox engine is not reachable: no Docker engine answers at bogus://nowhere"
    )
