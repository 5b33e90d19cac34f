"""An assembled Lancelot with a phone attached, for the skills tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.app import Lancelot, assemble
from core.config import Settings, load_settings
from tests.fakes.channel import MemoryChannel


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return load_settings(environ={"LANCELOT_HOME": str(tmp_path / "home")})


@pytest.fixture
async def app(settings: Settings) -> AsyncIterator[Lancelot]:
    async with assemble(settings, web=False) as lancelot:
        yield lancelot


@pytest.fixture
async def phone(app: Lancelot) -> MemoryChannel:
    channel = MemoryChannel()
    await app.attach(channel)
    return channel
