"""The Crusader switch itself: off until switched on, on for exactly its minutes, the minutes
left rounded up, and the same after a restart (the deadline is kept in state.db)."""

from __future__ import annotations

import aiosqlite

from core.governance.crusader import CrusaderMode
from tests.core.governance.service_rig import HandClock


def state(mode: CrusaderMode) -> tuple[bool, int]:
    """Whether it is on, and the minutes it shows left."""
    return mode.active(), mode.remaining_minutes()


async def loaded(db: aiosqlite.Connection, clock: HandClock) -> CrusaderMode:
    mode = CrusaderMode(db, clock)
    await mode.setup()
    return mode


async def test_a_new_switch_is_off_even_before_it_is_loaded(db: aiosqlite.Connection) -> None:
    clock = HandClock(0.5)
    mode = CrusaderMode(db, clock)
    assert state(mode) == (False, 0)
    await mode.setup()
    assert state(mode) == (False, 0)


async def test_on_for_exactly_its_minutes_with_the_minutes_left_rounded_up(
    db: aiosqlite.Connection,
) -> None:
    clock = HandClock(1000.0)
    mode = await loaded(db, clock)
    await mode.switch(True, 30)
    assert state(mode) == (True, 30)
    clock.now += 1
    assert mode.remaining_minutes() == 30  # 29 min 59 s left: still "30 minutes"
    clock.now = 1000.0 + 29 * 60 - 1
    assert mode.remaining_minutes() == 2  # 1 min 1 s
    clock.now = 1000.0 + 29 * 60
    assert mode.remaining_minutes() == 1
    clock.now = 1000.0 + 30 * 60 - 0.001
    assert state(mode) == (True, 1)  # on, so never "0 minutes left"
    clock.now = 1000.0 + 30 * 60
    assert state(mode) == (False, 0)


async def test_switched_off_it_is_off_at_once(db: aiosqlite.Connection) -> None:
    clock = HandClock(0.5)
    mode = await loaded(db, clock)
    await mode.switch(True, 10)
    await mode.switch(False, 10)
    assert state(mode) == (False, 0)


async def test_a_restart_keeps_the_deadline(db: aiosqlite.Connection) -> None:
    clock = HandClock(1000.0)
    await (await loaded(db, clock)).switch(True, 15)
    clock.now += 60
    again = await loaded(db, clock)
    assert state(again) == (True, 14)
    clock.now = 1000.0 + 15 * 60
    assert not again.active()


async def test_a_restart_keeps_it_off(db: aiosqlite.Connection) -> None:
    clock = HandClock(0.5)
    first = await loaded(db, clock)
    await first.switch(True, 15)
    await first.switch(False, 15)
    again = await loaded(db, clock)
    assert state(again) == (False, 0)
