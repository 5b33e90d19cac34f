"""A stop cuts short a wait that changes nothing, lets an effect under way finish, and never
swallows a real cancellation."""

from __future__ import annotations

import asyncio
import time

import pytest

from core.runtime.stopping import Stopped, StopSwitch, effect_underway, stoppable


async def test_a_stop_cuts_a_slow_wait_short() -> None:
    switch = StopSwitch()
    cancelled = asyncio.Event()

    async def slow_tool() -> str:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    async def task() -> str:
        with switch.active():
            return await stoppable(slow_tool())

    running = asyncio.create_task(task())
    await asyncio.sleep(0.05)
    asked = time.monotonic()
    assert switch.ask("owner", "telegram")
    with pytest.raises(Stopped):
        await running
    assert time.monotonic() - asked < 0.5
    assert cancelled.is_set()  # the tool's wait was cancelled, not left running
    assert not switch.ask("owner", "telegram")  # once


async def test_an_effect_under_way_finishes_before_the_stop_takes_effect() -> None:
    switch = StopSwitch()
    applied: list[str] = []

    async def apply_change() -> str:
        with effect_underway():
            await asyncio.sleep(0.3)
            applied.append("change")
        return "applied"

    async def task() -> list[str]:
        done = []
        with switch.active():
            done.append(await stoppable(apply_change()))
            done.append(await stoppable(asyncio.sleep(30, "never")))
        return done

    running = asyncio.create_task(task())
    await asyncio.sleep(0.1)
    switch.ask("owner", "telegram")
    await asyncio.sleep(0.05)
    assert not switch.effective  # the change is still being applied
    with pytest.raises(Stopped):
        await running
    assert applied == ["change"]


async def test_a_stop_asked_before_a_wait_starts_it_not() -> None:
    switch = StopSwitch()
    switch.ask("owner", "console")
    started = []

    async def tool() -> None:
        started.append(1)

    with switch.active(), pytest.raises(Stopped):
        await stoppable(tool())
    assert started == []


async def test_cancelling_the_task_still_cancels_it() -> None:
    switch = StopSwitch()

    async def task() -> None:
        with switch.active():
            await stoppable(asyncio.sleep(30))

    running = asyncio.create_task(task())
    await asyncio.sleep(0.05)
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running


async def test_without_a_switch_a_wait_is_a_plain_await() -> None:
    assert await stoppable(asyncio.sleep(0, "value")) == "value"
    with effect_underway():
        pass
