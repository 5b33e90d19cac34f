"""The heartbeat file: beats while Lancelot serves, a last "stopping" beat on a clean exit,
a write that fails shown by health (and beating again once it can), and a file that is no
beat never read as one."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from core.health.heartbeat import FILE, BeatState, Heartbeat, HeartbeatWriter, read_heartbeat
from core.runtime.tasks import Supervisor


async def test_beats_while_open_and_says_stopping_on_a_clean_exit(tmp_path: Path) -> None:
    tasks = Supervisor()
    async with HeartbeatWriter(tmp_path, 0.05, tasks):
        first = read_heartbeat(tmp_path)
        await asyncio.sleep(0.3)
        later = read_heartbeat(tmp_path)
    last = read_heartbeat(tmp_path)
    await tasks.aclose()
    assert first is not None
    assert later is not None
    assert last is not None
    assert first.pid == os.getpid()
    assert first.every == 0.05
    assert first.state is BeatState.RUNNING
    assert later.state is BeatState.RUNNING
    assert later.count >= first.count + 3
    assert later.at > first.at
    assert later.started == first.started
    assert last.state is BeatState.STOPPING
    assert last.count > later.count


async def test_a_beat_that_cannot_be_written_shows_in_health_until_one_can(
    tmp_path: Path,
) -> None:
    home = tmp_path / "not-yet"
    tasks = Supervisor()
    async with HeartbeatWriter(home, 0.05, tasks):
        reason = await tasks.health()
        assert reason is not None
        assert f"cannot write {FILE}" in reason
        home.mkdir()
        await asyncio.sleep(0.2)
        assert await tasks.health() is None
        assert read_heartbeat(home) is not None
    await tasks.aclose()


GOOD = Heartbeat(pid=7, started=1.0, at=2.0, count=3, every=5.0)


def test_a_written_beat_reads_back_the_same(tmp_path: Path) -> None:
    (tmp_path / FILE).write_text(GOOD.as_json())
    assert read_heartbeat(tmp_path) == GOOD


@pytest.mark.parametrize(
    "text",
    [
        "",
        "not json",
        "[]",
        json.dumps({**json.loads(GOOD.as_json()), "pid": True}),
        json.dumps({**json.loads(GOOD.as_json()), "pid": 7.5}),
        json.dumps({**json.loads(GOOD.as_json()), "at": "2.0"}),
        json.dumps({**json.loads(GOOD.as_json()), "state": "dancing"}),
        json.dumps({k: v for k, v in json.loads(GOOD.as_json()).items() if k != "count"}),
    ],
)
def test_a_file_that_is_no_beat_reads_as_none(tmp_path: Path, text: str) -> None:
    (tmp_path / FILE).write_text(text)
    assert read_heartbeat(tmp_path) is None


def test_no_file_reads_as_none(tmp_path: Path) -> None:
    assert read_heartbeat(tmp_path) is None
