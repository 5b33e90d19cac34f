"""Where the checkpoint chain begins (core/receipts/chain_start.py): an emptied checkpoint
file followed by a restart, a chain begun again with a new key, and a first checkpoint forged
past the first intervals, each caught by verify with the file and the line or receipt named;
a crash before the first checkpoint, and a ledger from before checkpoints, are not."""

from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path

import pytest

from core.receipts.base import CHAIN_START, Checkpoint
from core.receipts.chain_start import records
from core.receipts.checkpoints import CHECKPOINTS_FILE
from core.receipts.ledger import SqliteLedger
from core.receipts.model import Receipt
from core.receipts.signing import KEY_FILE, PUBLIC_FILE

from .test_checkpoint_chain import (
    checkpointer,
    failure,
    head_at,
    line_of,
    private_key,
    rewrite,
    signed,
    verify,
)

EVERY = 10


def outputs_of(home: Path, seq: int) -> str:
    db = sqlite3.connect(home / "ledger.db")
    try:
        (found,) = db.execute("SELECT outputs FROM receipts WHERE seq = ?", (seq,)).fetchone()
    finally:
        db.close()
    return str(found)


async def restart(home: Path, more: int = 0) -> None:
    """Open the ledger again as `lancelot run` does (with its checkpointer), add `more`
    receipts, close it."""
    cp = checkpointer(home, EVERY)
    async with SqliteLedger(home / "ledger.db", checkpoints=cp) as ledger:
        for i in range(more):
            await ledger.append_durable(Receipt("command", f"after{i}"))


async def test_an_emptied_checkpoint_file_then_a_restart_is_named_in_the_ledger(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    await signed(tmp_path, at=(10, 20, 30), every=EVERY)
    (tmp_path / CHECKPOINTS_FILE).write_text("")
    assert "is empty" in failure(tmp_path, every=EVERY)  # at rest
    with caplog.at_level(logging.CRITICAL):
        await restart(tmp_path, more=3)
    # The restart began a new chain at #1, signed and sound; the ledger says why.
    (alarm,) = [r.getMessage() for r in caplog.records if r.levelno == logging.CRITICAL]
    assert "the checkpoint chain was lost" in alarm
    assert alarm.endswith(" (lancelot receipts verify fails from now on)")
    assert [(r.seq, r.name) for r in records(tmp_path / "ledger.db")] == [(31, "lost")]
    assert failure(tmp_path, every=EVERY) == (
        "ledger.db receipt #31: the checkpoint chain was lost (no checkpoint left while the key"
        " stayed, over 30 receipts) and began again there"
    )
    await restart(tmp_path)  # and every restart after
    assert failure(tmp_path, every=EVERY).startswith("ledger.db receipt #31:")


async def test_a_crash_before_the_first_checkpoint_begins_the_chain_quietly(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    await signed(tmp_path, at=(4,), every=EVERY)
    (tmp_path / CHECKPOINTS_FILE).write_text("")  # as a kill before the first checkpoint
    with caplog.at_level(logging.CRITICAL):
        await restart(tmp_path, more=30)
    assert caplog.records == []
    assert [(r.seq, r.name, r.over) for r in records(tmp_path / "ledger.db")] == [(5, "began", 4)]
    facts = json.loads(outputs_of(tmp_path, 5))
    assert facts == {"over": 4, "key": facts["key"], "key_created": False}
    assert facts["key"].startswith("key:")
    report = verify(tmp_path, every=EVERY)
    assert report.ok, report.reason


async def test_a_chain_begun_again_with_a_new_key_is_named(tmp_path: Path) -> None:
    # A ledger from before checkpoints, then signed: its chain's beginning is recorded.
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        for i in range(25):
            ledger.append(Receipt("command", f"old{i}"))
    await restart(tmp_path, more=5)
    assert verify(tmp_path, every=EVERY).ok
    # Everything that vouched for it removed, then a restart: a new key, a new chain.
    for name in (CHECKPOINTS_FILE, KEY_FILE, PUBLIC_FILE):
        (tmp_path / name).unlink()
    await restart(tmp_path, more=2)
    assert failure(tmp_path, every=EVERY) == (
        "ledger.db receipt #32: a second checkpoint chain began there (the first began at"
        " receipt #26): the checkpoints and key before it were removed"
    )


async def test_a_first_checkpoint_past_the_first_intervals_with_no_beginning_is_named(
    tmp_path: Path,
) -> None:
    await signed(tmp_path, at=(10, 20, 30), every=EVERY)
    # With the key beside the ledger, a new chain whose #1 is the head, written by hand.
    forged = Checkpoint(30, head_at(tmp_path, 30), "2026-01-01T00:00:00Z", "", 1, CHAIN_START)
    rewrite(tmp_path, [line_of(forged, private_key(tmp_path))])
    assert failure(tmp_path, every=EVERY) == (
        "checkpoints.jsonl line 1: checkpoint #1 vouches for 30 receipts, past the first"
        " checkpoint (due by #10), and ledger.db records no chain beginning there: the"
        " checkpoints before it were removed"
    )
    # Within two intervals, a group commit may have carried the head past the first one.
    assert verify(tmp_path, every=15).ok
