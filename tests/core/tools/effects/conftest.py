"""A real Docker engine, the sandbox image, and a ShellEffects over a workspace in tmp_path.

Without an engine these tests skip on a developer's machine but FAIL in CI (CI=true).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from core.tools.capability import CapabilityTokens
from core.tools.effects import EffectSettings, ShellEffects
from core.tools.sandbox import DockerEngine, SandboxLimits
from core.tools.workspace import Workspace


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
