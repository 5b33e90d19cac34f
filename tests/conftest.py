"""Shared fixtures: every test gets its own LANCELOT_HOME under tmp_path and no real peers."""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import uvloop

from bot.app import Lancelot, assemble
from core.config import Settings, load_settings
from core.features import FeatureFlags
from core.tools.sandbox import DockerEngine, SandboxLimits, SandboxUnavailable
from core.tools.sandbox.image import build, exists
from tests.ci import unavailable
from tests.fakes.channel import MemoryChannel
from tests.receipt_kinds import registered_receipt_kinds  # noqa: F401 (autouse: kinds are registered)
from tests.replayed_decisions import replayed_decisions  # noqa: F401 (autouse: decisions replay)

# python-telegram-bot 22: report time periods as timedelta (reading them as ints warns).
os.environ.setdefault("PTB_TIMEDELTA", "true")


def pytest_asyncio_loop_factories(config: pytest.Config, item: pytest.Item) -> dict[str, Any]:
    """Every async test runs on uvloop's event loop, the one `lancelot run` serves on."""
    return {"uvloop": uvloop.new_event_loop}


SANDBOX_IMAGE = SandboxLimits().image
REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
PREFIXES = ("TELEGRAM_", "GCHAT_", "LANCELOT_", "FEATURE_", "OPENAI_", "ANTHROPIC_", "GEMINI_")


@pytest.fixture(autouse=True)
def _isolated_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test sees the developer's tokens, config or data directory."""
    for name in list(os.environ):
        if name.startswith(
            ("TELEGRAM_", "GCHAT_", "LANCELOT_", "FEATURE_", "OPENAI_", "ANTHROPIC_", "GEMINI_")
        ):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANCELOT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("LANCELOT_CONFIG", str(REPO / "config" / "lancelot.yaml"))
    # No warm sandbox containers for apps that never run a command (tests that do, warm it).
    monkeypatch.setenv("LANCELOT_SANDBOX_WARM_AT_START", "false")
    # The real local model is proven in tests/core/llm; elsewhere it would only load (and be
    # assembled into every test's home) in the background.
    monkeypatch.setenv("FEATURE_LOCAL_MODEL", "false")
    # The owner's default timezone is this machine's: the same on every machine in tests.
    monkeypatch.setenv("TZ", "UTC")


def _app_options(request: pytest.FixtureRequest) -> dict[str, Any]:
    """What `@pytest.mark.app(...)` asks for (module and test markers merged, closest wins):
    `env` (settings), `features` (FEATURE_* switches), `routers` (the test's own commands
    and button actions), `web` (serve the web app)."""
    options: dict[str, Any] = {}
    for marker in reversed(list(request.node.iter_markers("app"))):
        options.update(marker.kwargs)
    return options


@pytest.fixture
def settings(request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    """Settings over this test's own LANCELOT_HOME, plus the marker's `env`."""
    env = {"LANCELOT_HOME": str(tmp_path / "home"), **_app_options(request).get("env", {})}
    return load_settings(environ=env)


@pytest.fixture
async def app(request: pytest.FixtureRequest, settings: Settings) -> AsyncIterator[Lancelot]:
    """The one running Lancelot of a test: assembled as `lancelot run` does, no channel."""
    options = _app_options(request)
    async with assemble(
        settings,
        web=options.get("web", False),
        features=FeatureFlags(environ=options["features"]) if "features" in options else None,
        routers=options.get("routers", ()),
    ) as running:
        yield running


@pytest.fixture
async def phone(app: Lancelot) -> MemoryChannel:
    """The owner's phone, attached to `app`."""
    channel = MemoryChannel()
    await app.attach(channel)
    return channel


@pytest.fixture(scope="session")
def docker_image() -> Iterator[str]:
    """The sandbox image name, once the engine answers and the image exists (built once if
    missing). Without an engine the test skips on a developer's machine but FAILS in CI."""
    engine = DockerEngine()
    try:
        engine.ping()
        if not exists(engine, SANDBOX_IMAGE):
            if shutil.which("debootstrap") is None or os.geteuid() != 0:
                unavailable(
                    "no sandbox image and no way to build it (debootstrap, root)",
                    needs="a Docker engine and the sandbox image",
                )
            build(engine, SANDBOX_IMAGE)
    except SandboxUnavailable as exc:
        unavailable(str(exc), needs="a Docker engine and the sandbox image")
    yield SANDBOX_IMAGE
    engine.close()
