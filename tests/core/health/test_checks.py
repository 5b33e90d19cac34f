"""The delivery check: a channel whose cards keep failing for five minutes is degraded, and
the reason names it (so its alert goes out through the other channels)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from core.delivery.store import DeliveryKind, OutboxRow, OutboxStore
from core.delivery.writer import StateWriter
from core.events import Card, CardKind
from core.health.checks import STUCK_AFTER, delivery_check
from core.state import open_state_db

START = 1_700_000_000.0


class Wall:
    """A wall clock the test sets by hand."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def outbox(tmp_path: Path) -> AsyncIterator[tuple[OutboxStore, Wall]]:
    db = await open_state_db(tmp_path / "state.db")
    wall = Wall()
    async with StateWriter(tmp_path / "state.db") as writer:
        store = OutboxStore(db, writer, wall)
        await store.setup()
        yield store, wall
    await db.close()


async def queue(store: OutboxStore, key: str, channel: str, *, failed: bool) -> OutboxRow:
    row = OutboxRow(0, key, channel, "chat", DeliveryKind.SEND, Card(CardKind.NOTICE, key))
    await store.add(row)
    if failed:
        row.attempts = 1
        await store.attempt_failed(row, "502 Bad Gateway")
    return row


async def test_a_channel_failing_for_five_minutes_is_named(
    outbox: tuple[OutboxStore, Wall],
) -> None:
    store, wall = outbox
    check = delivery_check(store, wall)
    await queue(store, "a", "telegram", failed=True)
    await queue(store, "b", "telegram", failed=True)
    await queue(store, "c", "gchat", failed=False)  # waiting, never failed: not stuck
    delivered = await queue(store, "d", "gchat", failed=True)
    await store.part_delivered(delivered, "m1")  # failed once, then went out
    assert await check() is None  # failing, but not for long yet
    wall.now = START + STUCK_AFTER + 600
    assert await check() == "telegram: 2 card(s) undelivered for 15 min"


async def test_the_backlog_counts_each_channel_from_its_oldest_card(
    outbox: tuple[OutboxStore, Wall],
) -> None:
    store, wall = outbox
    await queue(store, "a", "telegram", failed=True)
    wall.now = START + 60
    await queue(store, "b", "gchat", failed=True)
    await queue(store, "c", "gchat", failed=True)
    found = sorted((b.channel, b.cards, b.oldest) for b in await store.failing())
    assert found == [("gchat", 2, START + 60), ("telegram", 1, START)]
