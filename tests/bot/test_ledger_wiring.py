"""The running app signs its ledger: on its settings' schedule, and at shutdown."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

from bot.app import assemble
from core.config import load_settings
from core.receipts.checkpoints import CHECKPOINTS_FILE
from core.receipts.model import Receipt


def checkpoint_seqs(home: Path) -> list[int]:
    text = (home / CHECKPOINTS_FILE).read_text()
    return [int(json.loads(line)["seq"]) for line in text.splitlines()]


async def test_the_app_checkpoints_as_configured_and_at_shutdown(tmp_path: Path) -> None:
    home = tmp_path / "home"
    settings = load_settings(
        environ={
            "LANCELOT_HOME": str(home),
            "LANCELOT_LEDGER_CHECKPOINT_EVERY_RECEIPTS": "5",
            "LANCELOT_LEDGER_CHECKPOINT_EVERY_MINUTES": "60",
        }
    )
    assert settings.ledger.checkpoint_every_receipts == 5
    assert settings.ledger.checkpoint_every_minutes == 60
    async with assemble(settings, web=False) as app:
        for i in range(12):
            await app.ledger.append_durable(Receipt("command", f"step{i}"))
        # By count, while running: signed in the background, so it may land a moment later.
        for _ in range(100):
            if (home / CHECKPOINTS_FILE).exists() and checkpoint_seqs(home):
                break
            await asyncio.sleep(0.05)
        assert checkpoint_seqs(home)
        assert checkpoint_seqs(home)[0] <= 12
    final = checkpoint_seqs(home)
    async with assemble(settings, web=False) as app:
        report = await app.ledger.verify()
    assert report.ok, report.reason
    # The last checkpoint of the first run covered its shutdown receipt, the ledger's end then.
    assert final[-1] > 12
    assert report.last_checkpoint is not None
    assert report.last_checkpoint.seq >= final[-1]
    db = sqlite3.connect(home / "ledger.db")
    (count,) = db.execute("SELECT max(seq) FROM receipts").fetchone()
    db.close()
    assert checkpoint_seqs(home)[-1] == count  # and the second run's shutdown covers its own
