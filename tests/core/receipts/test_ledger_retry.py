"""How often a ledger whose disk refuses every write tries again (core/receipts/ledger.py):
a twentieth of a second after the first failure, twice as long after each next one, and
never more than five seconds apart, so receipts land within five seconds of the disk's
return however long it was gone."""

from __future__ import annotations

import asyncio
import itertools
import sqlite3
import time
from pathlib import Path

import pytest

from core.receipts.ledger import SqliteLedger
from core.receipts.model import Receipt

from .test_ledger_failures import FAULT

FAILED = "receipts: a commit failed"
# The delays after failures 1 to 8: doubling from 0.05 s, capped at 5 s.
DELAYS = [0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 5.0]


@pytest.mark.slow
async def test_a_failing_disk_is_tried_again_at_doubling_delays_capped_at_five_seconds(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "ledger.db"
    async with SqliteLedger(path) as ledger:
        db = sqlite3.connect(path, isolation_level=None)
        db.execute(FAULT)
        ledger.append(Receipt("command", "waits"))
        deadline = time.monotonic() + 30
        while sum(FAILED in r.getMessage() for r in caplog.records) < len(DELAYS):
            assert time.monotonic() < deadline, "the writer stopped trying"
            await asyncio.sleep(0.01)
        db.execute("DROP TRIGGER fault")  # the disk is back: the next try goes in
        db.close()
        while not ledger.healthy:
            assert time.monotonic() < deadline, "the writer stopped trying"
            await asyncio.sleep(0.01)
        stored = time.time()
        assert await ledger.count() == 1
    tries = [r.created for r in caplog.records if FAILED in r.getMessage()] + [stored]
    gaps = [later - earlier for earlier, later in itertools.pairwise(tries)]
    assert len(gaps) == len(DELAYS)
    for gap, delay in zip(gaps, DELAYS, strict=True):
        assert gap >= delay  # a timer never fires early
    assert gaps[-1] < DELAYS[-1] + 0.5  # the cap: five seconds, not more
