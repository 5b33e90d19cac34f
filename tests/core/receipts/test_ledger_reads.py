"""What the ledger answers (core/receipts/ledger.py): a receipt's children up to a bound,
the kinds written, how many receipts hold a word, a checkpoint only with a checkpointer,
and a verify that names a key file that is not a key instead of failing."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path

from core.receipts.ledger import SqliteLedger
from core.receipts.model import Receipt
from core.receipts.signing import PUBLIC_FILE
from core.runtime.tasks import Supervisor

from .test_checkpoint_chain import checkpointer


async def test_children_are_the_first_hundred_unless_asked_for_more(tmp_path: Path) -> None:
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        root = Receipt("inbound", "message")
        ledger.append(root)
        for i in range(101):
            ledger.append(Receipt("tool_run", f"step{i}", parent_id=root.id))
        await ledger.flush()
        children = await ledger.children(root.id)
        assert [c.action_name for c in children] == [f"step{i}" for i in range(100)]
        assert len(await ledger.children(root.id, limit=200)) == 101


async def test_the_kinds_written_each_once_in_order(tmp_path: Path) -> None:
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        assert await ledger.action_types() == []
        for kind in ("tool_run", "command", "tool_run", "inbound"):
            ledger.append(Receipt(kind, "x"))
        await ledger.flush()
        assert await ledger.action_types() == ["command", "inbound", "tool_run"]


async def test_how_many_receipts_hold_the_words_counted_up_to_a_cap(tmp_path: Path) -> None:
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        for i in range(5):
            ledger.append(Receipt("command", f"walrus {i}"))
        ledger.append(Receipt("command", "puffin"))
        await ledger.flush_search()
        assert await ledger.count_matching("walrus", 10) == 5
        assert await ledger.count_matching("walrus", 2) == 3  # the cap, and one past it
        assert await ledger.count_matching("puffin", 10) == 1
        assert await ledger.count_matching("", 10) == 0


async def test_without_a_checkpointer_no_checkpoint_is_signed(tmp_path: Path) -> None:
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        await ledger.append_durable(Receipt("command", "first"))
        assert await ledger.checkpoint() is None
        assert ledger.latest_checkpoint is None
    assert list(tmp_path.glob("checkpoint*")) == []


async def test_a_key_file_that_is_not_a_key_fails_verify_by_name(tmp_path: Path) -> None:
    async with SqliteLedger(tmp_path / "ledger.db", checkpoints=checkpointer(tmp_path)) as ledger:
        await ledger.append_durable(Receipt("command", "first"))
        (tmp_path / PUBLIC_FILE).write_bytes(b"zz\n")
        report = await ledger.verify()
    assert not report.ok
    assert report.checked == 0
    assert (report.reason or "").startswith(
        f"{tmp_path / PUBLIC_FILE}: cannot read the checkpoint public key"
    )
    assert report.file == str(tmp_path / "ledger.db")


def committed(path: Path) -> int:
    db = sqlite3.connect(path)
    try:
        return int(db.execute("SELECT count(*) FROM receipts").fetchone()[0])
    finally:
        db.close()


async def test_a_queued_receipt_is_committed_within_a_moment(tmp_path: Path) -> None:
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        ledger.append(Receipt("command", "status"))
        deadline = time.monotonic() + 0.6  # the flush interval is a twentieth of a second
        while committed(tmp_path / "ledger.db") == 0:
            assert time.monotonic() < deadline, "not committed within the flush interval"
            await asyncio.sleep(0.01)


async def test_a_full_batch_goes_at_once_without_waiting_the_interval(tmp_path: Path) -> None:
    async with SqliteLedger(tmp_path / "ledger.db", flush_interval=60) as ledger:
        for i in range(511):
            ledger.append(Receipt("command", f"n{i}"))
        await asyncio.sleep(0.2)
        assert committed(tmp_path / "ledger.db") == 0  # gathering: not full yet
        ledger.append(Receipt("command", "n511"))
        deadline = time.monotonic() + 10
        while committed(tmp_path / "ledger.db") < 512:
            assert time.monotonic() < deadline, "a full batch of 512 was not committed"
            await asyncio.sleep(0.01)


async def test_a_rebuild_that_dies_is_named_in_health(tmp_path: Path) -> None:
    # A search index file that lost its table: the rebuild at open cannot read it.
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        await ledger.append_durable(Receipt("command", "first"))
    db = sqlite3.connect(tmp_path / "ledger-search.db")
    db.execute("DROP TABLE receipts_fts")
    db.close()
    supervisor = Supervisor()
    async with SqliteLedger(tmp_path / "ledger.db", tasks=supervisor):
        deadline = time.monotonic() + 10
        while not supervisor.died():
            assert time.monotonic() < deadline, "the rebuild did not end"
            await asyncio.sleep(0.01)
        assert supervisor.died() == ("ledger-reindex",)
