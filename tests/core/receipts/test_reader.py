"""The ledger's read side (core/receipts/reader.py): pages that end exactly where the
receipts do, stories that show the first thirty receipts of a long request with its true
size and page on from the last one shown, and undos found by the change a tool run made."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from core.receipts.base import ReceiptQuery
from core.receipts.ledger import SqliteLedger
from core.receipts.model import Receipt
from core.receipts.reader import changes_made


async def test_a_page_has_a_cursor_only_when_older_receipts_remain(tmp_path: Path) -> None:
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        for i in range(6):
            ledger.append(Receipt("command", f"n{i}"))
        await ledger.flush()
        first = await ledger.page(ReceiptQuery(limit=3))
        assert [r.seq for r in first.receipts] == [6, 5, 4]
        assert first.next_before_seq == 4
        last = await ledger.page(ReceiptQuery(limit=3, before_seq=4))
        assert [r.seq for r in last.receipts] == [3, 2, 1]
        assert last.next_before_seq is None  # exactly a page left: no empty page after it
        assert (await ledger.page(ReceiptQuery(limit=3, before_seq=1))).receipts == ()


async def test_a_search_page_has_a_cursor_only_when_older_hits_remain(tmp_path: Path) -> None:
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        for i in range(6):
            ledger.append(Receipt("command", f"n{i}", inputs={"t": "walrus"}))
        await ledger.flush_search()
        first = await ledger.page(ReceiptQuery(text="walrus", limit=3))
        assert [r.seq for r in first.receipts] == [6, 5, 4]
        assert first.next_before_seq == 4
        last = await ledger.page(ReceiptQuery(text="walrus", limit=3, before_seq=4))
        assert [r.seq for r in last.receipts] == [3, 2, 1]
        assert last.next_before_seq is None
        filtered = ReceiptQuery(text="walrus", action_type="command", limit=6)
        assert [r.seq for r in (await ledger.page(filtered)).receipts] == [6, 5, 4, 3, 2, 1]
        assert (await ledger.page(filtered)).next_before_seq is None


async def test_a_long_request_shows_its_first_thirty_receipts_and_its_size(tmp_path: Path) -> None:
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        asked = Receipt("inbound", "message")
        ledger.append(asked)
        for i in range(31):
            ledger.append(Receipt("tool_run", f"step{i}", quest_id=asked.id))
        await ledger.flush()
        (story,) = (await ledger.stories(None, 10)).stories
    assert story.root.id == asked.id
    assert [m.action_name for m in story.members] == [f"step{i}" for i in range(30)]
    assert story.size == 31


async def test_stories_page_on_from_the_last_one_shown(tmp_path: Path) -> None:
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        for i in range(5):
            asked = Receipt("inbound", f"message{i}")
            ledger.append(asked)
            ledger.append(Receipt("reply", "card", quest_id=asked.id))
        await ledger.flush()
        first = await ledger.stories(None, 2)
        assert [s.root.action_name for s in first.stories] == ["message4", "message3"]
        assert [s.size for s in first.stories] == [1, 1]
        second = await ledger.stories(first.next_before_seq, 2)
        assert [s.root.action_name for s in second.stories] == ["message2", "message1"]
        third = await ledger.stories(second.next_before_seq, 2)
        assert [s.root.action_name for s in third.stories] == ["message0"]
        assert third.next_before_seq is None


async def test_an_undo_of_a_change_a_tool_run_made_is_in_its_story(tmp_path: Path) -> None:
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        asked = Receipt("inbound", "message", inputs={"text": "/run touch a.txt"})
        ran = Receipt("tool_run", "shell.exec", outputs={"change": "c7"}, quest_id=asked.id)
        press = Receipt("button", "change.undo", inputs={"change": "c7"})
        undone = Receipt(
            "change_undone", "shell.apply", inputs={"change": "c7"}, parent_id=press.id
        )
        for receipt in (asked, ran, press, undone):
            ledger.append(receipt)
        await ledger.flush()
        (story,) = (await ledger.stories(None, 10)).stories
    assert [m.action_type for m in story.members] == ["tool_run", "change_undone"]
    assert story.size == 2


async def test_the_changes_a_request_made_are_named_by_dry_run_or_change(tmp_path: Path) -> None:
    made = [
        Receipt("dry_run", "shell.exec", inputs={"command": "rm a", "dry_run": "d1"}),
        Receipt("tool_run", "shell.exec", outputs={"change": "c2", "exit": 0}),
        Receipt("tool_run", "shell.exec", outputs={"exit": 0}),  # changed nothing
        Receipt("tool_run", "shell.exec", outputs={"change": None}),
        Receipt("command", "note", outputs='"change" in plain words'),
    ]
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        stored = [await ledger.append_durable(receipt) for receipt in made]
    assert changes_made(stored) == {"d1", "c2"}


async def test_a_rare_filter_stops_after_20_000_hits_with_a_cursor_to_go_on(
    tmp_path: Path,
) -> None:
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        ledger.append(Receipt("job_deleted", "rare", inputs={"t": "walrus"}))
        for _ in range(20_000):
            ledger.append(Receipt("tool_call", "common", inputs={"t": "walrus"}))
        await ledger.flush_search()
        query = ReceiptQuery(text="walrus", action_type="job_deleted")
        first = await ledger.page(query)
        assert first.receipts == ()  # 20,000 hits read (seqs 20,001 to 2), none of them rare
        assert first.next_before_seq == 2
        after = await ledger.page(
            ReceiptQuery(text="walrus", action_type="job_deleted", before_seq=2)
        )
        assert [r.action_name for r in after.receipts] == ["rare"]
        assert after.next_before_seq is None
        unfiltered = await ledger.page(ReceiptQuery(text="walrus"))  # a page, then stops
        assert [r.seq for r in unfiltered.receipts] == list(range(20_001, 19_951, -1))
        assert unfiltered.next_before_seq == 19_952


async def test_stories_look_for_requests_among_20_000_receipts_at_a_time(tmp_path: Path) -> None:
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        asked = Receipt("inbound", "message")
        ledger.append(asked)
        for _ in range(20_000):
            ledger.append(Receipt("tool_run", "step", quest_id=asked.id))
        await ledger.flush()
        first = await ledger.stories(None, 10)
        assert first.stories == ()  # seqs 20,001 to 2 hold no request: a cursor, not the end
        assert first.next_before_seq == 2
        second = await ledger.stories(first.next_before_seq, 10)
        assert [s.root.id for s in second.stories] == [asked.id]
        assert second.stories[0].size == 20_000
        assert second.next_before_seq is None


async def test_a_filtered_search_finds_hits_spread_among_receipts_that_pass(
    tmp_path: Path,
) -> None:
    # Ten commands between the hits: the filter's index holds more passing receipts in the
    # hits' span than there are hits, and every hit must still be found.
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        for i in range(1, 11):
            ledger.append(
                Receipt("command", f"n{i}", inputs={"t": "walrus" if i in (1, 5, 10) else "x"})
            )
        await ledger.flush_search()
        found = await ledger.page(ReceiptQuery(text="walrus", action_type="command"))
        assert [r.seq for r in found.receipts] == [10, 5, 1]
        none = await ledger.page(ReceiptQuery(text="puffin", action_type="command"))
        assert none.receipts == ()
        assert none.next_before_seq is None


async def test_a_full_page_found_at_the_scan_bound_still_ends_at_its_limit(
    tmp_path: Path,
) -> None:
    # The two rare hits are the 19,999th and 20,000th read: the walk stops there with a page
    # of one and a cursor after it, as any full page.
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        ledger.append(Receipt("tool_call", "common", inputs={"t": "walrus"}))
        for name in ("rare2", "rare3"):
            ledger.append(Receipt("job_deleted", name, inputs={"t": "walrus"}))
        for _ in range(19_998):
            ledger.append(Receipt("tool_call", "common", inputs={"t": "walrus"}))
        await ledger.flush_search()
        page = await ledger.page(ReceiptQuery(text="walrus", action_type="job_deleted", limit=1))
        assert [r.action_name for r in page.receipts] == ["rare3"]
        assert page.next_before_seq == 3


async def test_requests_alone_page_on_without_repeating_one(tmp_path: Path) -> None:
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        for i in range(4):
            ledger.append(Receipt("inbound", f"message{i}"))
        await ledger.flush()
        first = await ledger.stories(None, 2)
        assert [s.root.action_name for s in first.stories] == ["message3", "message2"]
        assert [s.size for s in first.stories] == [0, 0]  # nothing came of them
        second = await ledger.stories(first.next_before_seq, 2)
        assert [s.root.action_name for s in second.stories] == ["message1", "message0"]
        assert second.next_before_seq is None


async def test_an_empty_ledger_counts_nothing_and_starts_at_one(tmp_path: Path) -> None:
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        assert await ledger.count() == 0
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:  # its head read at open
        assert ledger.recorded == 0
        assert (await ledger.append_durable(Receipt("command", "first"))).seq == 1


async def test_a_read_before_the_ledger_is_open_is_refused_by_name(tmp_path: Path) -> None:
    ledger = SqliteLedger(tmp_path / "ledger.db")
    with pytest.raises(sqlite3.OperationalError, match=r"^the receipt ledger is not open$"):
        await ledger.get("r1")
