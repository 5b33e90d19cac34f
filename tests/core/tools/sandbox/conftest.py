"""A real Docker engine and the sandbox image for these tests: built once if missing.

Without an engine the Docker tests skip on a developer's machine but FAIL in CI (CI=true).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from core.tools.capability import CapabilityTokens
from core.tools.sandbox import DockerEngine, DockerSandbox, SandboxLimits
from core.tools.workspace import Workspace


@pytest.fixture
def capabilities() -> CapabilityTokens:
    return CapabilityTokens(b"sandbox-test-secret")


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    return Workspace(tmp_path / "workspace")


@pytest.fixture
def limits(docker_image: str) -> SandboxLimits:
    return SandboxLimits(image=docker_image, pool_size=2, timeout_seconds=3.0)


@pytest.fixture
async def sandbox(
    workspace: Workspace, capabilities: CapabilityTokens, limits: SandboxLimits
) -> AsyncIterator[DockerSandbox]:
    async with DockerSandbox(DockerEngine(), workspace, capabilities, limits) as box:
        yield box
