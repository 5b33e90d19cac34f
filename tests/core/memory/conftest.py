"""Fixtures: a real memory.db and a real receipt ledger under tmp_path, a clock the test moves."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from core.memory import Memory, MemoryStore
from core.receipts.base import ReceiptQuery
from core.receipts.ledger import SqliteLedger
from core.receipts.model import StoredReceipt
from tests.fakes.calendar import CalendarClock

START = 1_780_000_000.0  # a fixed wall time; tests move it with clock.advance


@dataclass
class Home:
    """One test's memory: the facade, its ledger and clock, and where memory.db lives."""

    memory: Memory
    ledger: SqliteLedger
    clock: CalendarClock
    path: Path

    async def receipts(self, action_type: str) -> list[StoredReceipt]:
        """The receipts of one kind, oldest first."""
        await self.ledger.flush()
        page = await self.ledger.page(ReceiptQuery(action_type=action_type, limit=200))
        return list(reversed(page.receipts))


@pytest.fixture
def clock() -> CalendarClock:
    return CalendarClock(START)


@pytest.fixture
async def ledger(tmp_path: Path) -> AsyncIterator[SqliteLedger]:
    async with SqliteLedger(tmp_path / "ledger.db") as opened:
        yield opened


@pytest.fixture
async def home(tmp_path: Path, ledger: SqliteLedger, clock: CalendarClock) -> AsyncIterator[Home]:
    path = tmp_path / "home" / "memory.db"
    async with MemoryStore(path) as store:
        yield Home(Memory(store, ledger, clock=clock), ledger, clock, path)


@pytest.fixture
def memory(home: Home) -> Memory:
    return home.memory
