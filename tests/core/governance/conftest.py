"""Governance fixtures: a state.db of the test's own."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import aiosqlite
import pytest

from core.state import open_state_db


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[aiosqlite.Connection]:
    """state.db under the test's tmp_path, its layout current; closed after the test."""
    opened = await open_state_db(tmp_path / "state.db")
    try:
        yield opened
    finally:
        await opened.close()
