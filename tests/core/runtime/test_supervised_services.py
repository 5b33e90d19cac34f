"""Services started with one app-wide Supervisor: a loop that dies shows in its health."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import StorageError
from core.health.snapshot import HealthMonitor
from core.receipts import chain
from core.receipts.ledger import SqliteLedger
from core.receipts.model import Receipt
from core.runtime.tasks import Supervisor


async def test_a_ledger_writer_that_dies_is_reported_without_the_receipt_in_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    secret = "sk-" + "z" * 40

    def broken(*_: object) -> object:
        raise RuntimeError(f"a bug in the writer holding {secret}")

    monkeypatch.setattr(chain, "ledger_row", broken)
    tasks = Supervisor()
    async with SqliteLedger(tmp_path / "ledger.db", tasks=tasks) as ledger:
        assert await tasks.health() is None
        with pytest.raises(StorageError, match="writer stopped"):
            await ledger.append_durable(Receipt("command", "first"))
        assert tasks.died() == ("ledger-writer",)
        assert await tasks.health() == "background task stopped: ledger-writer (RuntimeError)"
    assert "background task ledger-writer died: RuntimeError" in caplog.text
    assert secret not in caplog.text
    await tasks.aclose()


async def test_the_shared_supervisor_runs_each_service_loop_and_aclose_stops_them(
    tmp_path: Path,
) -> None:
    tasks = Supervisor()
    monitor = HealthMonitor(interval=3600, tasks=tasks)
    await monitor.__aenter__()
    async with SqliteLedger(tmp_path / "ledger.db", tasks=tasks) as ledger:
        await ledger.append_durable(Receipt("command", "one"))
        # the health monitor, the ledger writer, the search indexer (the reindex may be done)
        assert tasks.running >= 3
    assert tasks.running == 1  # the ledger stopped its own loops; the monitor still runs
    await tasks.aclose()
    assert tasks.running == 0
    assert tasks.died() == ()
    await monitor.__aexit__(None, None, None)  # already stopped: nothing left to do
