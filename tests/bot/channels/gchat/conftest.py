"""Fixtures for the Google Chat channel: a fake Google per test."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.fakes.gchat import FakeGoogle
from tests.fakes.telegram import FakeTelegram


@pytest.fixture
async def google() -> AsyncIterator[FakeGoogle]:
    async with FakeGoogle() as fake:
        yield fake


@pytest.fixture
async def tg() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram() as fake:
        yield fake
