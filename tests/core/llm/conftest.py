"""Fixtures: each flagship provider's real SDK pointed at its fake server."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from core.llm.providers import build_provider
from tests.fakes.llm.wiring import FAKES, Wired, config_for


@pytest.fixture(params=sorted(FAKES))
async def wired(request: pytest.FixtureRequest) -> AsyncIterator[Wired]:
    """Each flagship in turn, through its real SDK, against its fake."""
    name: str = request.param
    async with FAKES[name]() as fake:
        provider = build_provider(config_for(name, fake))
        try:
            yield Wired(name, fake, provider)
        finally:
            await provider.aclose()  # type: ignore[attr-defined]
