"""Fixtures for the Telegram channel: a fake Bot API server per test."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.fakes.telegram import FakeTelegram


@pytest.fixture
async def tg() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram() as fake:
        yield fake
