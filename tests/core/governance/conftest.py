"""Governance fixtures: a state.db, a ledger and a workspace of the test's own (a test
file may name its own `workspace`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import aiosqlite
import pytest

from core.receipts.ledger import SqliteLedger
from core.state import open_state_db
from core.tools.workspace import Workspace


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[aiosqlite.Connection]:
    """state.db under the test's tmp_path, its layout current; closed after the test."""
    opened = await open_state_db(tmp_path / "state.db")
    try:
        yield opened
    finally:
        await opened.close()


@pytest.fixture
async def ledger(tmp_path: Path) -> AsyncIterator[SqliteLedger]:
    """ledger.db under the test's tmp_path, closed after the test."""
    async with SqliteLedger(tmp_path / "ledger.db") as opened:
        yield opened


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    """An empty workspace under the test's tmp_path."""
    (tmp_path / "ws").mkdir()
    return Workspace(tmp_path / "ws")
