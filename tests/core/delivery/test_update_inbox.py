"""The update inbox: an update is kept once, handed on again after a crash until it is done,
and set aside with a receipt when its handling was cut short too often."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from pathlib import Path

import pytest

from core.delivery.inbox import KEEP_SECONDS, MAX_ATTEMPTS, InboxState, UpdateInbox
from core.delivery.store import DeliveryKind, OutboxRow, OutboxStore
from core.delivery.writer import StateWriter
from core.events import Card, CardKind
from core.receipts.base import ReceiptQuery
from core.receipts.ledger import SqliteLedger
from core.state import open_state_db


class Home:
    """state.db and the ledger of one home, opened afresh by each `start` (a restart)."""

    def __init__(self, tmp_path: Path) -> None:
        self.path = tmp_path
        self.ledger: SqliteLedger | None = None
        self.now = 1_000_000.0  # the inbox's wall clock

    async def start(self, stack: AsyncExitStack) -> UpdateInbox:
        state = await open_state_db(self.path / "state.db")
        stack.push_async_callback(state.close)
        self.ledger = await stack.enter_async_context(SqliteLedger(self.path / "ledger.db"))
        writer = await stack.enter_async_context(StateWriter(self.path / "state.db"))
        inbox = UpdateInbox(state, writer, self.ledger, wall=self.wall)
        await inbox.setup()
        self.writer, self.outbox = writer, OutboxStore(state, writer)
        await self.outbox.setup()
        return inbox

    def wall(self) -> float:
        return self.now

    async def abandoned(self) -> list[object]:
        assert self.ledger is not None
        await self.ledger.flush()
        page = await self.ledger.page(ReceiptQuery(action_type="update_abandoned"))
        return [json.loads(r.inputs) for r in page.receipts]


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return Home(tmp_path)


@pytest.fixture
async def inbox(home: Home) -> AsyncIterator[UpdateInbox]:
    async with AsyncExitStack() as stack:
        yield await home.start(stack)


async def test_an_update_is_taken_once_however_often_it_comes(inbox: UpdateInbox) -> None:
    first = await inbox.accept("telegram", [(10, '{"a":1}'), (11, '{"b":2}')])
    again = await inbox.accept("telegram", [(11, '{"b":2}'), (12, '{"c":3}')])
    other_channel = await inbox.accept("other", [(10, "{}")])

    assert first == {10, 11}
    assert again == {12}  # 11 is already kept: handed on once
    assert other_channel == {10}
    assert await inbox.state_of("telegram", 11) == (InboxState.OPEN, 1)


async def test_what_a_crash_left_open_comes_again_and_only_that(home: Home) -> None:
    async with AsyncExitStack() as stack:
        inbox = await home.start(stack)
        await inbox.accept("telegram", [(1, '{"n":1}'), (2, '{"n":2}'), (3, '{"n":3}')])
        await inbox.done("telegram", 2)
        # a kill -9 here: 1 and 3 were kept, never handled
    async with AsyncExitStack() as stack:
        inbox = await home.start(stack)
        found = await inbox.unfinished("telegram")

        assert [(k.update_id, k.payload, k.attempts) for k in found.replay] == [
            (1, '{"n":1}', 2),
            (3, '{"n":3}', 2),
        ]
        assert found.abandoned == ()
        assert await inbox.accept("telegram", [(1, '{"n":1}')]) == set()  # Telegram again
        assert (await inbox.unfinished("other")).replay == ()


async def test_marks_asked_for_at_once_all_land(inbox: UpdateInbox) -> None:
    ids = list(range(100, 400))
    await inbox.accept("telegram", [(i, "{}") for i in ids])

    await asyncio.gather(*(inbox.done("telegram", i) for i in ids))

    assert (await inbox.unfinished("telegram")).replay == ()
    assert {await inbox.state_of("telegram", i) for i in ids} == {(InboxState.DONE, 1)}


async def test_an_update_cut_short_too_often_is_set_aside_with_a_receipt(home: Home) -> None:
    async with AsyncExitStack() as stack:
        inbox = await home.start(stack)
        await inbox.accept("telegram", [(7, '{"poison":true}'), (8, "{}")])
    starts = []
    for _ in range(MAX_ATTEMPTS):  # each start hands it on; each time the process dies
        async with AsyncExitStack() as stack:
            inbox = await home.start(stack)
            found = await inbox.unfinished("telegram")
            starts.append(([k.update_id for k in found.replay], len(found.abandoned)))
            if found.replay and found.replay[0].update_id == 7:
                await inbox.done("telegram", 8)  # the other one gets through
            abandoned = await home.abandoned()

    assert starts == [([7, 8], 0), ([7], 0), ([], 1)]
    assert abandoned == [{"update_id": 7, "bytes": len('{"poison":true}')}]
    async with AsyncExitStack() as stack:
        inbox = await home.start(stack)
        assert await inbox.state_of("telegram", 7) == (InboxState.ABANDONED, MAX_ATTEMPTS)
        assert (await inbox.unfinished("telegram")).abandoned == ()  # told once


async def test_a_handled_update_keeps_its_id_but_not_what_it_said(
    home: Home, inbox: UpdateInbox
) -> None:
    pasted = '{"message": {"text": "my key is sk-' + "x" * 40 + '"}}'  # a key typed in chat
    await inbox.accept("telegram", [(20, pasted)])
    await inbox.done("telegram", 20)

    assert await inbox.accept("telegram", [(20, pasted)]) == set()  # still taken only once
    assert await inbox.state_of("telegram", 20) == (InboxState.DONE, 1)
    check = sqlite3.connect(home.path / "state.db")
    try:
        assert check.execute("SELECT payload FROM inbox WHERE update_id = 20").fetchall() == [("",)]
        check.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # as SQLite does on its own, in time
    finally:
        check.close()
    assert b"x" * 40 not in (home.path / "state.db").read_bytes()


def answer(key: str) -> OutboxRow:
    card = Card(kind=CardKind.REPLY, title="Answer", body="done")
    return OutboxRow(0, key, "telegram", "owner", DeliveryKind.SEND, card)


async def test_a_done_mark_sent_along_with_an_answer_lands_in_its_transaction(
    home: Home, inbox: UpdateInbox
) -> None:
    await inbox.accept("telegram", [(30, "{}")])
    commits = home.writer.commits

    stored = await home.outbox.add(answer("a30"), inbox.done_mark("telegram", 30))

    assert stored
    assert home.writer.commits == commits + 1
    assert await inbox.state_of("telegram", 30) == (InboxState.DONE, 1)
    assert await home.outbox.state_of("a30") is not None


async def test_a_mark_that_fails_alongside_an_answer_leaves_the_answer_stored(
    home: Home, inbox: UpdateInbox
) -> None:
    await inbox.accept("telegram", [(31, "{}")])

    def broken(conn: sqlite3.Connection) -> None:
        conn.execute("UPDATE inbox SET state = 'done' WHERE update_id = 31")
        conn.execute("UPDATE no_such_table SET x = 1")  # fails after a first change

    assert not await home.outbox.add(answer("a31"), broken)
    assert await home.outbox.state_of("a31") is not None  # the card is kept...
    assert await inbox.state_of("telegram", 31) == (InboxState.OPEN, 1)  # ...the mark undone


async def test_every_so_many_marks_forget_old_finished_updates(
    home: Home, inbox: UpdateInbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("core.delivery.inbox.PRUNE_EVERY", 3)
    await inbox.accept("telegram", [(1, "{}"), (2, "{}")])
    await inbox.done("telegram", 1)
    home.now += KEEP_SECONDS + 1  # update 1 can no longer come again; 2 is still open
    await inbox.accept("telegram", [(3, "{}"), (4, "{}")])
    await home.outbox.add(answer("a3"), inbox.done_mark("telegram", 3))  # the second mark
    assert await inbox.state_of("telegram", 1) == (InboxState.DONE, 1)

    await home.outbox.add(answer("a4"), inbox.done_mark("telegram", 4))  # the third

    assert await inbox.state_of("telegram", 1) is None
    assert await inbox.state_of("telegram", 2) == (InboxState.OPEN, 1)
    assert await inbox.state_of("telegram", 3) == (InboxState.DONE, 1)
