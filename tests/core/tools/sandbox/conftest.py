"""A real Docker engine and the sandbox image for these tests: built once if missing.

Without an engine the Docker tests skip on a developer's machine but FAIL in CI (CI=true).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from core.tools.capability import CapabilityTokens
from core.tools.sandbox import DockerEngine, DockerSandbox, SandboxLimits, SandboxUnavailable
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
