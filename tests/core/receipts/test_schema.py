"""The ledger's files and their versions: a ledger from a newer Lancelot is refused by
name; a search index from one is rebuilt (it is derived from the ledger); what the index
keeps of each receipt's inputs and outputs."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import pytest

from core.errors import StorageError
from core.receipts.ledger import SqliteLedger
from core.receipts.model import Receipt


def stamp(path: Path, version: int) -> None:
    with sqlite3.connect(path) as db:
        db.execute(f"PRAGMA user_version={version}")
    db.close()


async def test_a_ledger_from_a_newer_lancelot_names_its_schema(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    async with SqliteLedger(path):
        pass
    stamp(path, 99)
    with pytest.raises(StorageError, match="the ledger schema is version 99, newer than"):
        async with SqliteLedger(path):
            pass


async def test_a_search_index_from_a_newer_lancelot_is_rebuilt(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "ledger.db"
    async with SqliteLedger(path) as ledger:
        await ledger.append_durable(Receipt("reply", "answer", inputs={"text": "walrus"}))
    stamp(tmp_path / "ledger-search.db", 99)
    with caplog.at_level(logging.WARNING, logger="core.receipts.search"):
        async with SqliteLedger(path) as ledger:
            await ledger.flush_search()
            assert await ledger.count_matching("walrus", 10) == 1
    assert any("the search schema is version 99" in m for m in caplog.messages)


async def test_the_index_keeps_the_first_two_thousand_characters_of_each_side(
    tmp_path: Path,
) -> None:
    padding = "x" * (2000 - len('{"t":"') - len(" walrus"))
    inside = {"t": f"{padding} walrus"}  # its last word ends at character 2000
    beyond = {"t": f"{padding} narwhal"}  # one character longer: cut to "narwha"
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        await ledger.append_durable(Receipt("reply", "a", inputs=inside, outputs=beyond))
        await ledger.flush_search()
        assert await ledger.count_matching("walrus", 10) == 1
        assert await ledger.count_matching("narwhal", 10) == 0
