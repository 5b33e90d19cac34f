"""The approvals' alarm clock. On its own, over a real store that fails on demand: what a
round lapses and reminds (at the instant's edges), when it wakes next (just after the nearest
moment, once), a poke, the backoff after a failed read and its recovery, and stop(). In the
app: approvals still lapse after state.db was locked for a while, /health naming the loop
meanwhile; a loop that dies anyway is named dead in /health."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from collections.abc import AsyncIterator, Callable
from itertools import pairwise

import aiosqlite
import pytest

from bot.app import Lancelot
from core.governance.approvals import Approval, ApprovalState, ApprovalStore
from core.governance.deadlines import RETRY, Deadlines
from core.receipts.base import ReceiptQuery
from core.receipts.registry import GovernanceReceipt
from core.runtime.backoff import BackoffConfig
from core.runtime.tasks import Supervisor
from core.tools.action import ToolAction
from tests.core.governance.service_rig import HandClock
from tests.fakes.channel import MemoryChannel
from tests.fakes.owner import say
from tests.fakes.workspace import put


async def _wait_for(condition: Callable[[], bool], within: float = 10.0) -> None:
    deadline = time.monotonic() + within
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition never became true")
        await asyncio.sleep(0.02)


async def _ask(app: Lancelot, phone: MemoryChannel, folder: str) -> Approval:
    """A /run that waits for the owner's approval; the approval it made."""
    put(app.home / "workspace" / folder / "f.txt")
    await say(app, phone, f"/run rm -rf /workspace/{folder}")
    pending = await ApprovalStore(app.state).in_states(ApprovalState.PENDING)
    return next(a for a in pending if folder in a.action.describe())


async def _health(app: Lancelot, phone: MemoryChannel) -> str:
    card = await say(app, phone, "/health")
    return card.body


async def test_an_approval_lapses_after_state_db_was_locked_and_health_said_so_meanwhile(
    app: Lancelot, phone: MemoryChannel, caplog: pytest.LogCaptureFixture
) -> None:
    lapsing = await _ask(app, phone, "old")
    # Its deadline one second from now instead of 30 minutes; a new approval wakes the timer.
    soon = time.time() + 1.0
    await app.state.execute("UPDATE approvals SET expires_at = ? WHERE id = ?", (soon, lapsing.id))
    await _ask(app, phone, "other")
    # Another process holds state.db's write lock past the deadline. The app's connection
    # gives up after 0.1 s instead of its usual 5 s, so the test need not wait that long.
    await app.state.execute("PRAGMA busy_timeout = 100")
    blocker = sqlite3.connect(app.home / "state.db", isolation_level=None)
    try:
        blocker.execute("BEGIN EXCLUSIVE")
        await _wait_for(lambda: "database is locked" in caplog.text)
        assert "approval-expiry (state.db: database is locked)" in await _health(app, phone)
        still = blocker.execute("SELECT state FROM approvals WHERE id = ?", (lapsing.id,))
        assert still.fetchone() == ("pending",)
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    store = ApprovalStore(app.state)

    async def state() -> ApprovalState | None:
        found = await store.get(lapsing.id)
        return found.state if found else None

    for _ in range(500):  # the first retry comes within a second
        if await state() is ApprovalState.EXPIRED:
            break
        await asyncio.sleep(0.02)
    assert await state() is ApprovalState.EXPIRED
    await _wait_for(lambda: any(c.title.startswith("Expired") for _, c in phone.edits))
    await app.ledger.flush()
    page = await app.ledger.page(ReceiptQuery(action_type=GovernanceReceipt.APPROVAL_EXPIRED))
    assert [lapsing.id in r.inputs for r in page.receipts] == [True]
    assert "approval-expiry" not in await _health(app, phone)
    assert app.tasks.died() == ()


async def test_an_expiry_loop_that_dies_anyway_is_named_in_health(
    app: Lancelot, phone: MemoryChannel
) -> None:
    assert "approval-expiry" not in await _health(app, phone)
    broken = await _ask(app, phone, "old")
    # A row no code can read (its action is not JSON): not a passing database error.
    await app.state.execute("UPDATE approvals SET action = '{' WHERE id = ?", (broken.id,))
    put(app.home / "workspace" / "other" / "f.txt")
    await say(app, phone, "/run rm -rf /workspace/other")  # wakes the loop: it reads that row
    await _wait_for(lambda: app.tasks.died() == ("approval-expiry",))
    body = await _health(app, phone)
    assert "background task stopped: approval-expiry (JSONDecodeError)" in body


RM = ToolAction("shell.exec", "rm -rf dir14", {"in_workspace": True, "overwrites": False})
# Retries a tenth of a second, then half a second, apart: short enough to watch, far
# enough apart to tell which delay came.
QUICK = BackoffConfig(min_delay=0.1, max_delay=5.0, factor=5.0)
LOG = "core.governance.deadlines"


class FlakyStore(ApprovalStore):
    """The real store, whose reads of pending approvals fail as a locked state.db does on
    the reads numbered in `locked` (from 1), or with `broken` on read number `broken_at`;
    it notes the loop's time of each read."""

    def __init__(
        self,
        db: aiosqlite.Connection,
        clock: Callable[[], float],
        locked: frozenset[int] = frozenset(),
        broken_at: int = 0,
    ) -> None:
        super().__init__(db, clock)
        self.locked = locked
        self.broken_at = broken_at
        self.reads: list[float] = []

    @classmethod
    async def on(
        cls,
        db: aiosqlite.Connection,
        clock: Callable[[], float],
        locked: frozenset[int] = frozenset(),
        broken_at: int = 0,
    ) -> FlakyStore:
        """One over `db`, its tables made."""
        store = cls(db, clock, locked, broken_at)
        await store.setup()
        return store

    async def in_states(self, *states: ApprovalState, limit: int | None = None) -> list[Approval]:
        self.reads.append(asyncio.get_running_loop().time())
        if len(self.reads) in self.locked:
            raise sqlite3.OperationalError("database is locked")
        if len(self.reads) == self.broken_at:
            raise ValueError("an approval no code can read")
        return await super().in_states(*states, limit=limit)


class Alarm:
    """A Deadlines loop over `store` with the service's two effects done as the service does
    them (expire moves the approval; a reminder is claimed once), each noted with the
    wall-clock time it came at."""

    def __init__(
        self,
        store: FlakyStore,
        clock: Callable[[], float],
        remind_after: float | None = None,
        retry: BackoffConfig = QUICK,
    ) -> None:
        self.store = store
        self.tasks = Supervisor()
        self.expired: list[tuple[str, float]] = []
        self.reminded: list[tuple[str, float]] = []
        self.loop = Deadlines(
            store,
            clock,
            lambda: remind_after,
            expire=self._expire,
            remind=self._remind,
            tasks=self.tasks,
            retry=retry,
        )

    async def _expire(self, approval: Approval) -> None:
        if await self.store.move(approval.id, ApprovalState.PENDING, ApprovalState.EXPIRED):
            self.expired.append((approval.id, time.time()))

    async def _remind(self, approval: Approval) -> None:
        if await self.store.claim_reminder(approval.id):
            self.reminded.append((approval.id, time.time()))

    async def rounds(self, more: int) -> None:
        """Wait until `more` further rounds have begun (the one before them has ended)."""
        target = len(self.store.reads) + more
        await _wait_for(lambda: len(self.store.reads) >= target, within=5.0)

    async def look(self) -> None:
        """Poke the loop, and wait until the round the poke began has ended."""
        for _ in range(2):
            self.loop.poke()
            await self.rounds(1)


@pytest.fixture
async def alarms() -> AsyncIterator[list[Alarm]]:
    """Alarms a test starts; their tasks cancelled after it, whatever stop() does."""
    started: list[Alarm] = []
    yield started
    for alarm in started:
        await alarm.tasks.aclose()


def start(alarms: list[Alarm], alarm: Alarm) -> Alarm:
    """Start `alarm`'s loop (stopped after the test)."""
    alarms.append(alarm)
    alarm.loop.start()
    return alarm


async def ask(store: ApprovalStore, ttl: float) -> Approval:
    """A pending approval with `ttl` seconds to decide, from the store's clock's now."""
    return await store.create(RM, "T3", "deletes files", "card-1", "telegram", ttl)


def ids(noted: list[tuple[str, float]]) -> list[str]:
    return [approval_id for approval_id, _ in noted]


async def test_a_round_lapses_what_is_past_its_deadline_and_reminds_what_waited_long_enough(
    db: aiosqlite.Connection, alarms: list[Alarm]
) -> None:
    clock = HandClock(1000.0)
    store = await FlakyStore.on(db, clock)
    on_edge = await ask(store, 10.0)  # lapses after 1010, reminded from 1010
    late = await ask(store, 5.0)  # lapsed at 1010; its reminder is due too
    clock.now = 1005.0
    fresh = await ask(store, 100.0)  # reminded from 1015
    clock.now = 1010.0
    alarm = start(alarms, Alarm(store, clock, remind_after=10.0))
    await alarm.look()
    # At its deadline an approval still stands; a lapsed one is not reminded as well.
    assert ids(alarm.expired) == [late.id]
    assert ids(alarm.reminded) == [on_edge.id]
    clock.now = 1010.001
    await alarm.look()
    assert ids(alarm.expired) == [late.id, on_edge.id]
    assert ids(alarm.reminded) == [on_edge.id]
    assert (await store.get(fresh.id)).state is ApprovalState.PENDING  # type: ignore[union-attr]
    clock.now = 1015.0
    await alarm.look()
    assert ids(alarm.reminded) == [on_edge.id, fresh.id]
    assert ids(alarm.expired) == [late.id, on_edge.id]


async def test_it_wakes_once_just_after_the_nearest_deadline(
    db: aiosqlite.Connection, alarms: list[Alarm]
) -> None:
    store = await FlakyStore.on(db, time.time)
    lapsed = await ask(store, -1.0)
    later = await ask(store, 3600.0)
    soon = await ask(store, 0.3)  # the nearest, though asked after the others
    alarm = start(alarms, Alarm(store, time.time))
    await _wait_for(lambda: len(alarm.expired) == 2, within=3.0)
    [(first, _), (expired, at)] = alarm.expired
    assert (first, expired) == (lapsed.id, soon.id)
    assert soon.expires_at < at < soon.expires_at + 0.9  # just after it, not a second late
    assert len(store.reads) == 2  # one round at the start, one at the deadline: no spinning
    assert (await store.get(later.id)).state is ApprovalState.PENDING  # type: ignore[union-attr]


async def test_it_wakes_once_just_after_the_nearest_reminder(
    db: aiosqlite.Connection, alarms: list[Alarm]
) -> None:
    store = await FlakyStore.on(db, time.time)
    waiting = await ask(store, 3600.0)
    alarm = start(alarms, Alarm(store, time.time, remind_after=0.3))
    await _wait_for(lambda: bool(alarm.reminded), within=3.0)
    [(reminded, at)] = alarm.reminded
    assert reminded == waiting.id
    due = waiting.created_at + 0.3
    assert due <= at < due + 0.5
    assert len(store.reads) == 2
    assert alarm.expired == []


async def test_a_poke_wakes_the_sleeping_loop_for_one_round(
    db: aiosqlite.Connection, alarms: list[Alarm], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=LOG)
    store = await FlakyStore.on(db, time.time)
    alarm = start(alarms, Alarm(store, time.time))
    await alarm.rounds(1)  # found nothing pending: asleep for an hour
    soon = await ask(store, 0.2)
    alarm.loop.poke()
    await _wait_for(lambda: bool(alarm.expired), within=3.0)
    assert ids(alarm.expired) == [soon.id]
    await asyncio.sleep(0.3)
    # The start, the poke, the deadline: the poke is spent, the loop sleeps again.
    assert len(store.reads) == 3
    assert [r.getMessage() for r in caplog.records if r.name == LOG] == []  # nothing failed


async def test_a_failed_read_is_retried_after_a_growing_delay_and_its_end_is_told(
    db: aiosqlite.Connection, alarms: list[Alarm], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=LOG)
    clock = HandClock(1000.0)
    store = await FlakyStore.on(db, clock, locked=frozenset({1, 2, 4}))
    await ask(store, 0.0)  # at its deadline: while it stands, a round comes every 0.05 s
    alarm = start(alarms, Alarm(store, clock))
    await _wait_for(lambda: len(store.reads) == 2)
    failing = "retrying after an error: approval-expiry (state.db: database is locked)"
    assert await alarm.tasks.health() == failing
    await _wait_for(lambda: len(store.reads) == 7)  # rounds 5 and 6 worked
    assert await alarm.tasks.health() is None
    # Each retry waited its delay (asyncio may wake a timer a clock tick early).
    gaps = [later - earlier for earlier, later in pairwise(store.reads)]
    assert gaps[0] >= 0.09
    assert gaps[1] >= 0.45
    assert gaps[3] >= 0.09
    told = [r.getMessage() for r in caplog.records if r.name == LOG]
    failed = "approval expiry: state.db failed (database is locked); retrying in"
    back = "approval expiry: state.db answers again"
    # After a round that worked, the next failure waits the first delay again.
    assert told == [f"{failed} 0.1 s", f"{failed} 0.5 s", back, f"{failed} 0.1 s", back]
    assert alarm.tasks.died() == ()
    assert alarm.tasks.running == 1


async def test_the_first_retry_comes_within_a_second(
    db: aiosqlite.Connection, alarms: list[Alarm]
) -> None:
    store = await FlakyStore.on(db, time.time, locked=frozenset({1}))
    alarm = start(alarms, Alarm(store, time.time, retry=RETRY))
    await _wait_for(lambda: len(store.reads) == 2, within=3.0)
    assert 0.75 <= store.reads[1] - store.reads[0] < 1.5  # a second, less up to a fifth
    assert alarm.tasks.died() == ()


async def test_stop_ends_the_loop_even_one_that_died(
    db: aiosqlite.Connection, alarms: list[Alarm]
) -> None:
    store = await FlakyStore.on(db, time.time, broken_at=2)
    alarm = Alarm(store, time.time)
    await alarm.loop.stop()  # never started: nothing to stop
    start(alarms, alarm)
    await alarm.rounds(1)
    assert alarm.tasks.running == 1
    async with asyncio.timeout(2.0):
        await alarm.loop.stop()
    assert alarm.tasks.running == 0  # ended when stop() returns, not later
    assert alarm.tasks.died() == ()
    start(alarms, alarm)  # read 2 is one no code can read: the loop dies
    await _wait_for(lambda: alarm.tasks.died() == ("approval-expiry",))
    await alarm.loop.stop()
    assert alarm.tasks.running == 0
