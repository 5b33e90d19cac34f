"""The outbox as a channel sees it: ordered, paced, retried, resumed, never doubled."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack
from pathlib import Path

import pytest

from core.bus import Bus
from core.delivery.outbox import DeliveryPolicy, Outbox
from core.delivery.store import OutboxRow, OutboxState
from core.delivery.writer import StateWriter
from core.errors import DeliveryDeferred, DeliveryFailed, DeliveryRejected
from core.events import Button, Card, CardKind, MessageRef
from core.receipts.base import ReceiptQuery
from core.receipts.ledger import SqliteLedger
from core.state import open_state_db
from tests.fakes.clock import LeapingClock

MESSAGE_IDS = itertools.count(1)  # unique across restarts, as a platform's are


class FlakyChannel:
    """A channel whose next deliveries fail as told; cards take `len(body) // 10 + 1` parts."""

    name = "flaky"

    def __init__(self, clock: LeapingClock) -> None:
        self.clock = clock
        self.failures: list[Exception] = []  # the next attempts fail with these
        self.part_failures: dict[tuple[str, int], list[Exception]] = {}
        self.shown: list[tuple[float, str, int]] = []  # (virtual time, title, part)
        self.edits: list[tuple[str, str]] = []
        self.screen: dict[str, str] = {}  # message id -> the title it shows now
        self.hold: asyncio.Event | None = None  # the next delivery waits for it
        self.holding = False

    @property
    def owner_chat_ids(self) -> tuple[str, ...]:
        return ("owner",)

    def parts(self, card: Card) -> int:
        return len(card.body) // 10 + 1

    async def deliver_part(self, chat_id: str, card: Card, part: int) -> MessageRef:
        if self.hold is not None:
            self.holding = True
            await self.hold.wait()
            self.hold, self.holding = None, False
        if self.failures:
            raise self.failures.pop(0)
        if self.part_failures.get((card.title, part)):
            raise self.part_failures[(card.title, part)].pop(0)
        self.shown.append((self.clock.now, card.title, part))
        message_id = str(next(MESSAGE_IDS))
        self.screen[message_id] = card.title
        return MessageRef(self.name, chat_id, message_id)

    async def deliver(self, chat_id: str, card: Card) -> MessageRef:
        raise AssertionError("the outbox delivers part by part")

    async def edit(self, ref: MessageRef, card: Card) -> None:
        if self.failures:
            raise self.failures.pop(0)
        self.edits.append((ref.message_id, card.title))
        self.screen[ref.message_id] = card.title

    def is_group(self, chat_id: str) -> bool:
        return chat_id.startswith("-")

    async def typing(self, chat_id: str) -> None:
        pass


class Rig:
    def __init__(self, stack: AsyncExitStack, tmp_path: Path, clock: LeapingClock) -> None:
        self.stack, self.tmp_path, self.clock = stack, tmp_path, clock

    async def start(self, policy: DeliveryPolicy | None = None) -> tuple[Bus, Outbox, FlakyChannel]:
        state = await open_state_db(self.tmp_path / "state.db")
        self.stack.push_async_callback(state.close)
        self.ledger = await self.stack.enter_async_context(
            SqliteLedger(self.tmp_path / "ledger.db")
        )
        writer = await self.stack.enter_async_context(StateWriter(self.tmp_path / "state.db"))
        outbox = Outbox(state, self.ledger, policy or DeliveryPolicy(), self.clock, writer=writer)
        await outbox.setup()
        await self.stack.enter_async_context(outbox)
        bus, channel = Bus(), FlakyChannel(self.clock)
        bus.attach(channel, outbox=outbox)
        await outbox.resume(channel.name)
        return bus, outbox, channel

    async def failures(self) -> list[str]:
        await self.ledger.flush()
        page = await self.ledger.page(ReceiptQuery(action_type="delivery"))
        return [r.error_message or "" for r in page.receipts]


@pytest.fixture
async def rig(tmp_path: Path) -> AsyncIterator[Rig]:
    async with AsyncExitStack() as stack:
        yield Rig(stack, tmp_path, LeapingClock())


def card(title: str, body: str = "", buttons: tuple[Button, ...] = ()) -> Card:
    return Card(kind=CardKind.NOTICE, title=title, body=body, buttons=buttons)


async def test_a_private_chat_is_not_paced_and_a_group_gets_twenty_a_minute(rig: Rig) -> None:
    bus, _, channel = await rig.start()
    start = rig.clock.now
    for i in range(6):  # a quick back-and-forth with the owner: nothing waits
        await bus.send(channel.name, "owner", card(f"card {i}"))
    assert [round(t - start, 1) for t, _, _ in channel.shown] == [0.0] * 6
    for i in range(22):
        await bus.send(channel.name, "-100", card(f"group {i}"))
    times = [round(t - start, 1) for t, title, _ in channel.shown if title.startswith("group")]
    assert times == [0.0] * 20 + [3.0, 6.0]
    assert [title for _, title, _ in channel.shown][6:] == [f"group {i}" for i in range(22)]


async def test_the_same_card_twice_is_delivered_once(rig: Rig) -> None:
    bus, _, channel = await rig.start()
    once = card("Approve?")
    first = await bus.send(channel.name, "owner", once)
    second = await bus.send(channel.name, "owner", once)

    assert first == second
    assert len(channel.shown) == 1
    assert bus.card_of(first) == once.correlation_id


async def test_a_long_card_resumes_at_the_part_that_failed(rig: Rig) -> None:
    bus, _, channel = await rig.start()
    channel.part_failures[("Long", 1)] = [DeliveryFailed("blip"), DeliveryFailed("blip")]
    with pytest.raises(DeliveryDeferred):
        await bus.send(channel.name, "owner", card("Long", "x" * 25))  # three parts
    await until(lambda: len(channel.shown) == 3)

    assert [(title, part) for _, title, part in channel.shown] == [
        ("Long", 0),
        ("Long", 1),
        ("Long", 2),
    ]


async def test_a_permanent_refusal_fails_once_with_a_receipt(rig: Rig) -> None:
    bus, outbox, channel = await rig.start()
    channel.failures = [DeliveryRejected("Forbidden: bot was blocked by the user")]
    refused = card("Hello?")
    with pytest.raises(DeliveryFailed) as caught:
        await bus.send(channel.name, "owner", refused)
    with pytest.raises(DeliveryFailed):
        await bus.send(channel.name, "owner", refused)  # not tried again

    assert not isinstance(caught.value, DeliveryDeferred)
    assert channel.shown == []
    assert await rig.failures() == ["Forbidden: bot was blocked by the user"]
    key = f"send:flaky:owner:{refused.correlation_id}"
    assert (await outbox.store.state_of(key)) == (OutboxState.FAILED, [])


async def test_too_many_transient_failures_give_up_with_a_receipt(rig: Rig) -> None:
    bus, _, channel = await rig.start(DeliveryPolicy(max_attempts=4))
    channel.failures = [DeliveryFailed(f"down {i}") for i in range(10)]
    with pytest.raises(DeliveryDeferred):
        await bus.send(channel.name, "owner", card("Never"))
    async with asyncio.timeout(5):
        while not (failures := await rig.failures()):  # noqa: ASYNC110 (no event to await)
            await asyncio.sleep(0.005)

    assert failures == ["down 3"]
    assert rig.clock.slept >= 0.8 + 1.6 + 3.2
    assert len(channel.failures) == 6  # exactly four attempts


async def test_a_restart_resumes_and_remembers_what_was_delivered(tmp_path: Path) -> None:
    clock = LeapingClock()
    delivered = card("Delivered", buttons=(Button("Go", "t" * 32),))
    async with AsyncExitStack() as stack:
        bus, _, channel = await Rig(stack, tmp_path, clock).start()
        ref = await bus.send(channel.name, "owner", delivered)
        channel.failures = [DeliveryFailed("down")] * 100
        with pytest.raises(DeliveryDeferred):
            await bus.send(channel.name, "owner", card("Queued"))
    async with AsyncExitStack() as stack:
        bus, _, channel = await Rig(stack, tmp_path, clock).start()
        await until(lambda: len(channel.shown) == 1)

    assert [title for _, title, _ in channel.shown] == ["Queued"]
    assert bus.card_of(ref) == delivered.correlation_id  # a press on it still finds its card


async def test_an_update_reaches_delivered_and_queued_copies(rig: Rig) -> None:
    bus, _, channel = await rig.start()
    shown = card("Approve?")
    ref = await bus.send(channel.name, "owner", shown)
    channel.failures = [DeliveryFailed("down")]
    other_chat = Card(kind=CardKind.NOTICE, title="Approve?", correlation_id=shown.correlation_id)
    with pytest.raises(DeliveryDeferred):
        await bus.send(channel.name, "elsewhere", other_chat)
    edited = await bus.update(shown.correlation_id, card("Approved"))
    await until(lambda: len(channel.screen) == 2 and set(channel.screen.values()) == {"Approved"})

    assert edited == 2
    assert (ref.message_id, "Approved") in channel.edits


async def test_an_update_waits_for_a_copy_on_its_way(rig: Rig) -> None:
    bus, _, channel = await rig.start()
    long = card("Approve?", "x" * 25)  # three parts
    channel.part_failures[("Approve?", 1)] = [DeliveryFailed("blip")]
    with pytest.raises(DeliveryDeferred):
        await bus.send(channel.name, "owner", long)  # the first part is out
    edited = await bus.update(long.correlation_id, card("Approved"))
    await until(lambda: len(channel.edits) == 1)

    assert edited == 1
    assert [title for _, title, _ in channel.shown] == ["Approve?"] * 3
    assert channel.edits == [(list(channel.screen)[-1], "Approved")]  # the last part: buttons


async def until(predicate: Callable[[], bool]) -> None:
    """Wait for the lanes (virtual sleeps return at once; real work takes a few loop turns)."""
    async with asyncio.timeout(5):
        while not predicate():  # noqa: ASYNC110 (the fake channel has no event to await)
            await asyncio.sleep(0.005)


async def test_resume_skips_a_card_delivered_while_it_read_the_table(tmp_path: Path) -> None:
    # The channel serves before resume() runs: a quick reply can be pending when resume reads
    # the table and delivered before resume queues what it read. It must not go twice.
    clock = LeapingClock()
    async with AsyncExitStack() as stack:
        rig = Rig(stack, tmp_path, clock)
        bus, outbox, channel = await rig.start()
        channel.failures = [DeliveryFailed("down")] * 100
        with pytest.raises(DeliveryDeferred):
            await bus.send(channel.name, "owner", card("From before"))
    async with AsyncExitStack() as stack:
        state = await open_state_db(tmp_path / "state.db")
        stack.push_async_callback(state.close)
        ledger = await stack.enter_async_context(SqliteLedger(tmp_path / "ledger.db"))
        writer = await stack.enter_async_context(StateWriter(tmp_path / "state.db"))
        outbox = await stack.enter_async_context(
            Outbox(state, ledger, DeliveryPolicy(), clock, writer=writer)
        )
        bus, channel = Bus(), FlakyChannel(clock)
        bus.attach(channel, outbox=outbox)  # serving, not resumed yet
        read, landed = asyncio.Event(), asyncio.Event()
        read_table = outbox.store.pending

        async def slow_read(name: str) -> list[OutboxRow]:  # a read that ends as a reply lands
            rows = await read_table(name)
            read.set()
            await landed.wait()
            return rows

        outbox.store.pending = slow_read  # type: ignore[method-assign]
        on_its_way = asyncio.Event()
        channel.hold = on_its_way  # the quick reply is being sent...
        quick = card("Quick reply")
        sending = asyncio.create_task(bus.send(channel.name, "owner", quick))
        key = f"send:{channel.name}:owner:{quick.correlation_id}"
        await until(lambda: channel.holding)
        while await outbox.store.state_of(key) is None:  # noqa: ASYNC110 (a commit, no event)
            await asyncio.sleep(0.005)
        resuming = asyncio.create_task(outbox.resume(channel.name))
        await read.wait()  # ...so resume reads it as pending; then it lands
        on_its_way.set()
        await sending
        await until(lambda: [t for _, t, _ in channel.shown] == ["Quick reply"])
        landed.set()
        resumed = await resuming
        await until(lambda: len(channel.shown) == 2)
        await asyncio.sleep(0.05)

    assert resumed == 1
    assert sorted(title for _, title, _ in channel.shown) == ["From before", "Quick reply"]


async def test_a_card_delivered_while_its_sender_marks_it_queued_is_answered_at_once(
    rig: Rig,
) -> None:
    _, outbox, channel = await rig.start()

    async def queued(stored: bool) -> None:  # the sender's own write is slower
        while not channel.shown or await outbox.store.pending(channel.name):  # noqa: ASYNC110 (nothing signals)
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)  # delivered and recorded as such

    async with asyncio.timeout(5):  # not the first attempt's wait (DeliveryPolicy: 30 s)
        ref = await outbox.send(channel.name, "owner", card("Answer"), key="k1", queued=queued)
    assert channel.screen[ref.message_id] == "Answer"
