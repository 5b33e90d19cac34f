"""A real Docker engine, the sandbox image, and a ShellEffects over a workspace in tmp_path.

Without an engine these tests skip on a developer's machine but FAIL in CI (CI=true).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from core.tools.capability import CapabilityTokens
from core.tools.effects import EffectSettings, ShellEffects
from core.tools.sandbox import DockerEngine, SandboxLimits, SandboxUnavailable
from core.tools.sandbox.image import build, exists
from core.tools.workspace import Workspace
from tests.ci import unavailable

IMAGE = SandboxLimits().image


def _unusable(reason: str) -> None:
    unavailable(reason, needs="a Docker engine and the sandbox image")


@pytest.fixture(scope="session")
def docker_image() -> Iterator[str]:
    """The sandbox image name, once the engine answers and the image exists."""
    engine = DockerEngine()
    try:
        engine.ping()
        if not exists(engine, IMAGE):
            if shutil.which("debootstrap") is None or os.geteuid() != 0:
                _unusable("no sandbox image and no way to build it (debootstrap, root)")
            build(engine, IMAGE)
    except SandboxUnavailable as exc:
        _unusable(str(exc))
    yield IMAGE
    engine.close()


@pytest.fixture
def capabilities() -> CapabilityTokens:
    return CapabilityTokens(b"effects-test-secret")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def workspace(home: Path) -> Workspace:
    return Workspace(home / "workspace")


@pytest.fixture
def limits(docker_image: str) -> SandboxLimits:
    return SandboxLimits(image=docker_image, timeout_seconds=5.0)


@pytest.fixture
async def effects(
    workspace: Workspace, home: Path, capabilities: CapabilityTokens, limits: SandboxLimits
) -> AsyncIterator[ShellEffects]:
    async with ShellEffects(
        DockerEngine(), workspace, home, capabilities, limits, EffectSettings(pool_size=2)
    ) as engine:
        yield engine
