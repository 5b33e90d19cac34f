"""The progress message's throttle: the latest state wins, the final state is always shown,
and a task never gets more than one edit per tool call plus the spare."""

from __future__ import annotations

import asyncio

import pytest

from core.agent.progress import Phase, Progress, ProgressTuning
from core.bus import Bus
from core.config import load_settings
from core.errors import ConfigError
from core.events import CardKind
from core.runtime.tasks import Supervisor
from tests.fakes.channel import MemoryChannel


def progress(phone: MemoryChannel, tuning: ProgressTuning) -> Progress:
    bus = Bus()
    bus.attach(phone)
    return Progress(bus, None, phone.name, "owner-chat", "quest-1", tuning, Supervisor())


async def test_a_task_with_twenty_slow_tool_calls_gets_at_most_twenty_five_edits() -> None:
    phone = MemoryChannel()
    shown = progress(phone, ProgressTuning(after=0, interval=0.01, spare=5))
    for n in range(20):  # every change waits out the interval: each one could be an edit
        shown.tool(f"list_files ({n})")
        await asyncio.sleep(0.03)
        shown.tool_done()
        await asyncio.sleep(0.03)
    shown.end(Phase.DONE)
    await shown.aclose()

    assert len(phone.progress) == 1  # one message
    assert len(phone.progress_edits) == shown.edits <= 20 + 5
    final = phone.progress_edits[-1][1]
    assert (final.kind, final.title) == (CardKind.PROGRESS, "Finished")
    assert "Tool calls: 20" in final.body
    assert final.buttons == ()


async def test_changes_within_the_interval_coalesce_and_the_latest_wins() -> None:
    phone = MemoryChannel()
    shown = progress(phone, ProgressTuning(after=0, interval=0.5, spare=5))
    await asyncio.sleep(0.05)  # the message is out
    for n in range(1, 9):
        shown.step(n, 8, f"step {n}")
    await asyncio.sleep(0.7)
    assert len(phone.progress_edits) == 1
    assert "Step 8 of 8: step 8" in phone.progress_edits[0][1].body
    shown.end(Phase.STOPPED)
    await shown.aclose()
    assert phone.progress_edits[-1][1].title == "Stopped"


async def test_a_quick_task_shows_no_progress_message() -> None:
    phone = MemoryChannel()
    shown = progress(phone, ProgressTuning(after=0.5, interval=1.0))
    shown.tool("read_file (/workspace/a.txt)")
    shown.end(Phase.DONE)
    await shown.aclose()
    assert phone.progress == []


def test_the_defaults_show_progress_after_two_seconds_and_edit_at_most_once_a_second() -> None:
    settings = load_settings(environ={})
    assert settings.progress.after_seconds == 2.0
    assert settings.progress.edit_interval_seconds == 1.0
    tuning = ProgressTuning()
    assert (tuning.after, tuning.interval, tuning.spare) == (2.0, 1.0, 5)
    with pytest.raises(ConfigError, match="edit_interval_seconds"):  # Telegram's limit
        load_settings(environ={"LANCELOT_PROGRESS_EDIT_INTERVAL_SECONDS": "0.5"})
