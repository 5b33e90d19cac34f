"""Fixtures for agent conversations."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.core.agent.stage import Stage, stage


@pytest.fixture
async def lancelot(tmp_path: Path) -> AsyncIterator[Stage]:
    async with stage(tmp_path) as running:
        yield running
