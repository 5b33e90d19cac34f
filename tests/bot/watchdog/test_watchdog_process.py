"""Issue 31, item 5, done when: a kill -9 of `lancelot run` under `lancelot watchdog` reaches
the owner's chat in the fake Bot API, once; and Lancelot started again is told once too.
Both are real processes; the watchdog is given 3 s of silence, Lancelot beats every 0.5 s."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.watchdog.message import BACK_MARK, DOWN_MARK
from core.health.heartbeat import BeatState, read_heartbeat
from tests.fakes.lancelot_process import REPO, lancelot_run, run_env
from tests.fakes.processes import kill_group, reap, spawn
from tests.fakes.telegram import DEFAULT_USER_ID, FakeTelegram

OWNER = DEFAULT_USER_ID
AFTER = 3.0
ENV = {
    "LANCELOT_WATCHDOG_AFTER_SECONDS": str(AFTER),
    "LANCELOT_WATCHDOG_HEARTBEAT_SECONDS": "0.5",
    "LANCELOT_SANDBOX_WARM_AT_START": "false",
    "FEATURE_LOCAL_MODEL": "false",
}
START = 90.0  # seconds a loaded 2-core machine may take to start `lancelot run`


def told(tg: FakeTelegram, mark: str) -> list[str]:
    """The texts in the owner's chat that carry `mark`."""
    return [m["text"] for m in tg.messages_in(OWNER) if mark in m["text"]]


async def beating(home: Path, after: int = 0) -> int:
    """Wait until a running Lancelot other than pid `after` beats; its pid."""
    for _ in range(int(START * 10)):
        beat = read_heartbeat(home)
        if beat is not None and beat.state is BeatState.RUNNING and beat.pid != after:
            return beat.pid
        await asyncio.sleep(0.1)
    raise TimeoutError(f"no heartbeat in {home} within {START} s")


@contextlib.asynccontextmanager
async def watchdog(env: dict[str, str]) -> AsyncIterator[asyncio.subprocess.Process]:
    """`lancelot watchdog` as a process, stopped and reaped however the test ends."""
    process = await spawn(
        sys.executable, "-m", "bot.cli", "watchdog", env=env, cwd=REPO,
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    try:
        yield process
    finally:
        await reap(process)


@pytest.mark.slow
async def test_a_kill_9_of_lancelot_reaches_the_owner_once_and_its_return_once(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    async with FakeTelegram() as tg:
        env = run_env(home, tg, owner=OWNER, **ENV)
        first = await lancelot_run(env)
        try:
            pid = await beating(home)
            async with watchdog(env):
                await asyncio.sleep(2 * AFTER)
                assert told(tg, DOWN_MARK) == []  # beating: nothing to say
                kill_group(first)
                killed = time.monotonic()
                await tg.wait_for(lambda: len(told(tg, DOWN_MARK)) == 1, timeout=4 * AFTER)
                took = time.monotonic() - killed
                await asyncio.sleep(2 * AFTER)
                assert len(told(tg, DOWN_MARK)) == 1  # once per outage
                second = await lancelot_run(env)
                try:
                    new_pid = await beating(home, after=pid)
                    await tg.wait_for(lambda: len(told(tg, BACK_MARK)) == 1, timeout=4 * AFTER)
                    await asyncio.sleep(2 * AFTER)
                finally:
                    await reap(second)
        finally:
            await reap(first)
        [down] = told(tg, DOWN_MARK)
        [back] = told(tg, BACK_MARK)
    assert AFTER - 1 <= took <= AFTER + 3
    assert f"pid {pid}" in down
    assert "Last log line: " in down
    assert tg.token not in down
    assert f"pid {new_pid}" in back
