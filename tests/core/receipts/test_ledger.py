"""The receipt ledger: batched durable writes, redaction, append-only, tamper evidence."""

from __future__ import annotations

import asyncio
import hashlib
import json
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from core.errors import StorageError
from core.receipts import chain, reader
from core.receipts.base import ReceiptQuery
from core.receipts.ledger import SqliteLedger
from core.receipts.model import Receipt, ReceiptStatus
from core.receipts.redaction import Redactor


def raw(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, isolation_level=None)


async def fill(ledger: SqliteLedger, count: int) -> None:
    for i in range(count):
        ledger.append(Receipt("command", f"step{i}", inputs={"i": i}))
    await ledger.flush()


async def test_durable_append_returns_the_committed_receipt(tmp_path: Path) -> None:
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        stored = await ledger.append_durable(Receipt("command", "status", inputs={"a": 1}))
        assert stored.seq == 1
        # Committed: another connection sees it right away.
        rows = raw(tmp_path / "ledger.db").execute("SELECT id FROM receipts").fetchall()
        assert rows == [(stored.id,)]


async def test_batched_appends_are_all_committed_in_order(tmp_path: Path) -> None:
    async with SqliteLedger(tmp_path / "ledger.db", batch_size=16) as ledger:
        await fill(ledger, 1000)
        assert await ledger.count() == 1000
        page = await ledger.page(ReceiptQuery(limit=3))
        assert [r.action_name for r in page.receipts] == ["step999", "step998", "step997"]


async def test_close_commits_what_is_queued(tmp_path: Path) -> None:
    async with SqliteLedger(tmp_path / "ledger.db", flush_interval=60) as ledger:
        ledger.append(Receipt("system", "last-words"))
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        assert await ledger.count() == 1


async def test_secrets_are_redacted_before_storage(tmp_path: Path) -> None:
    fake_key = "sk-" + "x" * 40
    redactor = Redactor(["configured-secret-value"])
    async with SqliteLedger(tmp_path / "ledger.db", redactor=redactor) as ledger:
        await ledger.append_durable(
            Receipt(
                "tool_run",
                "http",
                inputs={"headers": {"Authorization": "Bearer abcdefghijkl"}, "key": fake_key},
                outputs=f"used {fake_key} and configured-secret-value",
                error_message="login failed with password=hunter22",
            )
        )
    dump = "\n".join(raw(tmp_path / "ledger.db").iterdump())
    for secret in (fake_key, "abcdefghijkl", "configured-secret-value", "hunter22"):
        assert secret not in dump


async def test_update_and_delete_are_rejected(tmp_path: Path) -> None:
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        await fill(ledger, 3)
    db = raw(tmp_path / "ledger.db")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        db.execute("UPDATE receipts SET status = 'success' WHERE seq = 1")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        db.execute("DELETE FROM receipts WHERE seq = 2")
    assert db.execute("SELECT count(*) FROM receipts").fetchone() == (3,)


def tamper(path: Path, *statements: str) -> None:
    """What an attacker with file access would do: drop the guards, then edit."""
    db = raw(path)
    db.execute("DROP TRIGGER receipts_no_update")
    db.execute("DROP TRIGGER receipts_no_delete")
    for statement in statements:
        db.execute(statement)
    db.close()


@pytest.mark.parametrize(
    ("statements", "bad_seq", "reason"),
    [
        (["UPDATE receipts SET outputs = '\"forged\"' WHERE seq = 5"], 5, "altered"),
        (["DELETE FROM receipts WHERE seq = 4"], 5, "missing"),
        (
            [
                "UPDATE receipts SET seq = -1 WHERE seq = 3",
                "UPDATE receipts SET seq = 3 WHERE seq = 6",
                "UPDATE receipts SET seq = 6 WHERE seq = -1",
            ],
            3,
            "removed or reordered",
        ),
    ],
)
async def test_verify_finds_the_first_tampered_receipt(
    tmp_path: Path, statements: list[str], bad_seq: int, reason: str
) -> None:
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        await fill(ledger, 10)
        assert (await ledger.verify()).ok
    tamper(tmp_path / "ledger.db", *statements)
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        report = await ledger.verify()
    assert not report.ok
    assert report.first_bad_seq == bad_seq
    assert reason in (report.reason or "")


async def test_parent_and_quest_chains(tmp_path: Path) -> None:
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        root = Receipt("inbound", "message")
        ledger.append(root)
        for name in ("plan", "execute"):
            ledger.append(Receipt("plan", name, parent_id=root.id, quest_id=root.id))
        await ledger.flush()
        children = await ledger.children(root.id)
        assert [c.action_name for c in children] == ["plan", "execute"]
        assert all(c.quest_id == root.id for c in children)


async def test_filters_search_and_keyset_paging(tmp_path: Path) -> None:
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        for i in range(120):
            status = ReceiptStatus.FAILURE if i % 3 == 0 else ReceiptStatus.SUCCESS
            kind = "tool_run" if i % 2 else "command"
            ledger.append(Receipt(kind, f"n{i}", inputs={"text": f"walrus{i}"}, status=status))
        await ledger.flush_search()
        seen: list[int] = []
        query = ReceiptQuery(action_type="tool_run", status="failure", limit=7)
        while True:
            page = await ledger.page(query)
            seen += [r.seq for r in page.receipts]
            assert all(r.action_type == "tool_run" and r.status == "failure" for r in page.receipts)
            if page.next_before_seq is None:
                break
            query = ReceiptQuery(
                action_type="tool_run", status="failure", limit=7, before_seq=page.next_before_seq
            )
        assert seen == sorted(seen, reverse=True)
        assert len(seen) == len(set(seen)) == 20
        found = await ledger.page(ReceiptQuery(text="walrus11"))
        assert [r.action_name for r in found.receipts] == ["n11"]
        found = await ledger.page(ReceiptQuery(text="walrus11*"))
        assert {r.action_name for r in found.receipts} == {"n11"} | {
            f"n{i}" for i in range(110, 120)
        }
        assert (await ledger.page(ReceiptQuery(text="wa*"))).receipts == ()  # too short
        assert (await ledger.page(ReceiptQuery(text='") OR *'))).receipts == ()


async def test_search_index_is_rebuilt_when_lost(tmp_path: Path) -> None:
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        await fill(ledger, 50)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{tmp_path / 'ledger-search.db'}{suffix}").unlink(missing_ok=True)
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        await ledger.flush_search()
        page = await ledger.page(ReceiptQuery(text="step42"))
        assert [r.action_name for r in page.receipts] == ["step42"]


async def test_corrupt_database_is_a_clear_storage_error(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    path.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(StorageError, match=r"ledger\.db: cannot open the receipt ledger"):
        async with SqliteLedger(path):
            pass


async def test_failed_writes_are_retried_not_lost(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    async with SqliteLedger(path, flush_interval=0.01) as ledger:
        await fill(ledger, 1)
        blocker = raw(path)
        blocker.execute("PRAGMA busy_timeout=0")
        blocker.execute("BEGIN EXCLUSIVE")  # another writer holds the database
        ledger.append(Receipt("command", "during-outage"))
        await asyncio.sleep(0.3)
        blocker.execute("COMMIT")
        blocker.close()
        await asyncio.wait_for(ledger.flush(), 15)
        assert ledger.healthy
        assert await ledger.count() == 2


async def test_each_hash_is_sha256_of_the_previous_hash_and_the_canonical_json(
    tmp_path: Path,
) -> None:
    # The chain's definition, written out independently of the ledger's code: ledgers
    # written by earlier versions must keep verifying.
    async with SqliteLedger(tmp_path / "ledger.db", redactor=Redactor()) as ledger:
        for i, duration in enumerate((1.5, 7, None)):
            ledger.append(
                Receipt(
                    "tool_run",
                    f"naïve-{i}",
                    inputs={"b": [1, 2.5, None, 'ünï\n"q"'], "a": {"z": 1, "y": True}},
                    outputs=f"out {i}",
                    duration_ms=duration,
                    token_count=3 if i else None,
                    error_message="boom" if i == 2 else None,
                    metadata={"k": i},
                )
            )
        await ledger.flush()
        assert (await ledger.verify()).ok
    cursor = raw(tmp_path / "ledger.db").execute("SELECT * FROM receipts ORDER BY seq")
    names = [d[0] for d in cursor.description]
    prev, durations = "0" * 64, []
    for values in cursor:
        row = dict(zip(names, values, strict=True))
        content = {k: v for k, v in row.items() if k not in ("prev_hash", "hash")}
        text = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        assert row["prev_hash"] == prev
        assert row["hash"] == hashlib.sha256((prev + text).encode()).hexdigest()
        prev = row["hash"]
        durations.append(row["duration_ms"])
    assert durations == [1.5, 7.0, None]  # stored (and hashed) as the REAL column holds it
    assert json.loads(row["inputs"]) == {"a": {"y": True, "z": 1}, "b": [1, 2.5, None, 'ünï\n"q"']}


async def test_a_second_writer_on_the_same_file_does_not_fork_the_chain(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "ledger.db"
    async with SqliteLedger(path) as first, SqliteLedger(path) as second:
        for i in range(3):
            await first.append_durable(Receipt("command", f"first{i}"))
            await second.append_durable(Receipt("command", f"second{i}"))
        assert await first.count() == 6
        report = await first.verify()
    assert report.ok
    assert report.checked == 6
    assert "appended again" not in caplog.text  # a seq taken is no repeated receipt


async def test_a_large_batch_keeps_order_and_chain(tmp_path: Path) -> None:
    # 1,000 queued at once: one batch of several multi-row INSERTs and a shorter last one.
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        await fill(ledger, 1000)
        stored = await ledger.append_durable(Receipt("command", "after"))
        assert stored.seq == 1001
        report = await ledger.verify()
    assert report.ok
    assert report.checked == 1001
    names = [n for (n,) in raw(tmp_path / "ledger.db").execute("SELECT action_name FROM receipts")]
    assert names == [f"step{i}" for i in range(1000)] + ["after"]


async def test_filtered_search_is_bounded_and_resumable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reader, "SEARCH_CHUNK", 10)
    monkeypatch.setattr(reader, "SEARCH_MAX_SCAN", 100)
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        # Receipt n{i} has seq i + 1. Rare ones without the word must not be found.
        rare, wordless = {5, 150, 100, 200, 290}, {100, 200, 290}
        for i in range(300):
            text = "puffin" if i in wordless else "walrus"
            ledger.append(
                Receipt("job_deleted" if i in rare else "tool_call", f"n{i}", inputs={"t": text})
            )
        await ledger.flush_search()
        query = ReceiptQuery(text="walrus", action_type="job_deleted")
        first = await ledger.page(query)
        # 100 hits scanned (10, then 40, then 50), none of them rare with the word: a short
        # page and a cursor where the scan stopped.
        hits = [i + 1 for i in range(299, -1, -1) if i not in wordless]
        assert first.receipts == ()
        assert first.next_before_seq == hits[99]
        names: list[str] = []
        page = first
        while page.next_before_seq is not None:
            page = await ledger.page(replace(query, before_seq=page.next_before_seq))
            names += [r.action_name for r in page.receipts]
        assert names == ["n150", "n5"]
        common = await ledger.page(ReceiptQuery(text="walrus", action_type="tool_call", limit=60))
        expected = [i + 1 for i in range(299, -1, -1) if i not in rare][:60]
        assert [r.seq for r in common.receipts] == expected
        assert common.next_before_seq == expected[-1]


async def test_data_json_or_utf8_cannot_hold_is_kept_as_text_and_the_ledger_goes_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    fake_key = "sk-" + "x" * 40
    cycle: dict[str, object] = {}
    cycle["self"] = cycle
    odd = [
        Receipt("inbound", "surrogate", inputs={"text": f"caf\udce9 {fake_key}"}),
        Receipt("inbound", "name \udcff"),
        Receipt("tool_run", "cycle", outputs=cycle),
        Receipt("tool_run", "nan", duration_ms=float("nan")),
    ]
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        for receipt in odd:
            ledger.append(receipt)
        after = await ledger.append_durable(Receipt("command", "after"))
        assert after.seq == 5
        stored = [await ledger.get(r.id) for r in odd]
        assert all(s is not None for s in stored)
        surrogate, name, cyclic, nan = (s for s in stored if s is not None)
        assert "\\udce9" in surrogate.inputs
        assert fake_key not in surrogate.inputs
        assert "could not be stored as given" in (surrogate.error_message or "")
        assert name.action_name == "name \\udcff"
        assert "{...}" in cyclic.outputs
        assert nan.duration_ms is None
        assert nan.error_message is None
        assert (await ledger.verify()).ok
    assert fake_key not in caplog.text
    assert "udce9" not in caplog.text


async def test_a_receipt_appended_twice_is_stored_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        twice = Receipt("command", "twice")
        ledger.append(twice)
        ledger.append(twice)  # in the same batch
        first = await ledger.append_durable(Receipt("command", "next"))
        again = await ledger.append_durable(twice)  # in a later batch
        assert again.seq == 1
        assert again.id == twice.id
        later = await ledger.append_durable(Receipt("command", "later"))
        assert (first.seq, later.seq) == (2, 3)
        assert await ledger.count() == 3
        assert (await ledger.verify()).ok
        assert ledger.healthy
    told = [r.getMessage() for r in caplog.records if r.name == "core.receipts.ledger"]
    assert told == ["1 receipt(s) appended again; stored once"] * 2  # each repeat, once


async def test_a_writer_that_dies_is_reported_and_nobody_waits_forever(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_: object) -> object:
        raise RuntimeError("a bug in the writer")

    monkeypatch.setattr(chain, "ledger_row", broken)
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        with pytest.raises(StorageError, match="writer stopped"):
            await ledger.append_durable(Receipt("command", "first"))
        assert not ledger.healthy
        with pytest.raises(StorageError, match="stopped"):
            await ledger.append_durable(Receipt("command", "second"))
        ledger.append(Receipt("command", "third"))  # dropped and counted, not raised
        assert ledger.dropped == 2
    # ...and closing it does not hang either.


async def test_recorded_counts_queued_receipts_and_follows_commits(tmp_path: Path) -> None:
    async with SqliteLedger(tmp_path / "ledger.db", flush_interval=60) as ledger:
        await fill(ledger, 3)
        assert ledger.recorded == await ledger.count() == 3
        ledger.append(Receipt("command", "status"))
        assert ledger.recorded == 4  # queued, not committed yet
        assert await ledger.count() == 3
        await ledger.flush()
        assert ledger.recorded == await ledger.count() == 4
    async with SqliteLedger(tmp_path / "ledger.db") as reopened:
        assert reopened.recorded == 4  # read from the file at open


@pytest.mark.parametrize(
    ("numbers", "stored", "salvaged"),
    [
        ({"token_count": 5.0, "duration_ms": 7}, (5, 7.0), False),
        ({"token_count": 2.5, "duration_ms": 1.5}, (2.5, 1.5), False),
        ({"token_count": True, "duration_ms": False}, (1, 0.0), False),
        ({"token_count": float("nan"), "duration_ms": float("nan")}, (None, None), False),
        ({"token_count": 2**63 - 1, "duration_ms": 2**70}, (2**63 - 1, 2.0**70), False),
        ({"token_count": -(2**63)}, (-(2**63), None), False),
        ({"token_count": 2**63}, (None, None), True),  # sqlite3 cannot bind it
        ({"token_count": -(2**63) - 1}, (None, None), True),
        ({"token_count": 1e300}, (None, None), True),
        ({"token_count": "12"}, (None, None), True),  # SQLite would turn the text into 12
        ({"duration_ms": "3"}, (None, None), True),
        ({"duration_ms": 10**400}, (None, None), True),  # no float holds it
    ],
)
async def test_numbers_are_stored_as_their_columns_give_them_back(
    tmp_path: Path, numbers: dict[str, object], stored: tuple[object, object], salvaged: bool
) -> None:
    # The hash covers what verification reads back; a number the column would change, or
    # cannot hold at all, is kept out of it (with a note) rather than stop the writer.
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        receipt = await ledger.append_durable(Receipt("command", "n", **numbers))  # type: ignore[arg-type]
        back = await ledger.get(receipt.id)
        assert back is not None
        assert (back.token_count, back.duration_ms) == stored
        assert [type(v) for v in (back.token_count, back.duration_ms)] == [type(v) for v in stored]
        noted = "could not be stored as given" in (back.error_message or "")
        assert noted == salvaged
        assert (await ledger.verify()).ok
        assert ledger.healthy
