"""The receipts' full-text index (core/receipts/search.py): an unreadable index file is
rebuilt with a warning, each receipt's inputs and outputs are searched over their first
2,000 characters, and an index opened on its own indexes and finds like the ledger's."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import pytest

from core.receipts.ledger import SqliteLedger
from core.receipts.model import Receipt
from core.receipts.schema import COLUMNS
from core.receipts.search import SearchIndex


async def test_an_unreadable_index_is_rebuilt_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        await ledger.append_durable(Receipt("command", "walrus"))
    index = tmp_path / "ledger-search.db"
    index.write_bytes(b"not an index at all" * 100)
    with caplog.at_level(logging.WARNING):
        async with SqliteLedger(tmp_path / "ledger.db") as ledger:
            await ledger.flush_search()
            assert await ledger.count_matching("walrus", 10) == 1
    (warned,) = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warned.startswith(f"search index {index} unreadable ({index}: cannot open the search")
    assert warned.endswith("); rebuilding it")


async def test_inputs_and_outputs_are_searched_over_their_first_2000_characters(
    tmp_path: Path,
) -> None:
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        for column in ("inputs", "outputs"):
            near = {column: "x " * 980 + f"near{column}"}  # within the first 2,000
            far = {column: "x " * 1000 + f"far{column}"}  # past them
            ledger.append(Receipt("command", "near", **near))  # type: ignore[arg-type]
            ledger.append(Receipt("command", "far", **far))  # type: ignore[arg-type]
        await ledger.flush_search()
        for column in ("inputs", "outputs"):
            assert await ledger.count_matching(f"near{column}", 10) == 1
            assert await ledger.count_matching(f"far{column}", 10) == 0


async def test_an_index_of_its_own_indexes_what_was_queued_before_it_closed(
    tmp_path: Path,
) -> None:
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        for word in ("walrus", "puffin", "walrus"):
            ledger.append(Receipt("command", word))
    db = sqlite3.connect(tmp_path / "ledger.db")
    rows = db.execute(f"SELECT {COLUMNS} FROM receipts ORDER BY seq").fetchall()
    db.close()
    index = SearchIndex(tmp_path / "own-search.db")  # no Supervisor given: one of its own
    await index.open()
    index.submit(rows)
    await index.close()  # right away: what was queued is indexed first
    again = SearchIndex(tmp_path / "own-search.db")
    await again.open()
    try:
        assert await again.hits("walrus", None, 10) == [3, 1]
        assert await again.indexed_upto() == 3
    finally:
        await again.close()


async def test_a_search_before_the_index_is_open_is_refused_by_name(tmp_path: Path) -> None:
    index = SearchIndex(tmp_path / "search.db")
    with pytest.raises(sqlite3.OperationalError, match=r"^the search index is not open$"):
        await index.hits("walrus", None, 10)


async def test_a_deleted_index_is_rebuilt_whole_from_more_receipts_than_one_batch_holds(
    tmp_path: Path,
) -> None:
    # A rebuild hands the indexer up to 20,000 receipts at once, which it writes 8,192 at a
    # time: every one of them is found, the first of the second batch as well.
    total = 8200
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        for number in range(1, total + 1):
            ledger.append(Receipt("command", f"walrus{number}"))
    for suffix in ("", "-wal", "-shm"):
        Path(f"{tmp_path / 'ledger-search.db'}{suffix}").unlink(missing_ok=True)
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        await ledger.flush_search()
        assert await ledger.count_matching("command", 2 * total) == total
        for number in (1, 8192, 8193, total):
            assert await ledger.count_matching(f"walrus{number}", 10) == 1, number


async def test_a_batch_the_index_cannot_take_is_logged_and_the_next_one_tried(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # The index is derived data: a write it refuses (here its table is gone) is logged with
    # how many receipts it held and dropped whole, and the indexer takes the next batch.
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        for word in ("walrus", "puffin"):
            await ledger.append_durable(Receipt("command", word))
    db = sqlite3.connect(tmp_path / "ledger.db")
    rows = db.execute(f"SELECT {COLUMNS} FROM receipts ORDER BY seq").fetchall()
    db.close()
    index = SearchIndex(tmp_path / "own-search.db")
    await index.open()
    try:
        db = sqlite3.connect(index.path)
        db.execute("DROP TABLE receipts_fts")
        db.close()
        for row in rows:
            index.submit([row])
            await index.drain()
    finally:
        await index.close()
    logged = [r.getMessage() for r in caplog.records if r.name == "core.receipts.search"]
    assert logged == ["search index write failed for 1 receipts: no such table: receipts_fts"] * 2
