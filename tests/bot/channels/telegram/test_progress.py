"""A long task on the phone: one progress message, edited within Telegram's limits, with a
Stop button; /stop; forged and stale Stops; Stop while an approved change is applied.
Through python-telegram-bot and the fake Bot API."""

from __future__ import annotations

import asyncio
import itertools
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from core.config import Settings
from core.events import Button, Card, CardKind, MessageRef
from core.llm.types import Completion
from core.tools.action import ToolAction
from core.tools.base import CommandRunner, ToolResult
from tests.fakes.scripted_model import ScriptedRouter, call, final
from tests.fakes.telegram import FakeTelegram, SentMessage

from .harness import OWNER, Running, eventually, running, settings_for

QUICK_PROGRESS = {"LANCELOT_PROGRESS_AFTER_SECONDS": "0"}


def listing(n: int) -> list[Completion]:
    """A model that looks at the workspace `n` times, then answers."""
    return [call("list_files") for _ in range(n)] + [final(f"Looked {n} times.")]


def progress_of(tg: FakeTelegram) -> SentMessage:
    return next(m for m in tg.sent if m["text"].startswith(("<b>Working", "<b>Stop", "<b>Fin")))


def buttons(message: SentMessage) -> list[dict[str, Any]]:
    markup = message["reply_markup"]
    return [b for row in markup["inline_keyboard"] for b in row] if markup else []


def edit_times(tg: FakeTelegram, message_id: int) -> list[float]:
    return [
        c.at
        for c in tg.calls
        if c.method == "editMessageText" and c.params.get("message_id") == message_id
    ]


async def shown(tg: FakeTelegram, title: str) -> SentMessage:
    await tg.wait_for(lambda: any(m["plain_text"].startswith(title) for m in tg.sent), 15)
    return next(m for m in tg.sent if m["plain_text"].startswith(title))


async def test_a_long_task_shows_one_progress_message_edited_at_most_once_a_second(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    model = ScriptedRouter(listing(8), latency=0.3)
    settings = settings_for(tg, tmp_path / "home", **QUICK_PROGRESS)
    async with running(tg, settings, models=model) as lancelot:
        tg.user_message("look around my workspace a few times")
        answer = await shown(tg, "Done")
        progress = progress_of(tg)
        await eventually(lambda: progress_of(tg)["plain_text"].startswith("Finished"))
        stop_receipts = await lancelot.receipts("stop_requested")

    progress = progress_of(tg)
    times = edit_times(tg, progress["message_id"])
    assert "Looked 8 times." in answer["plain_text"]
    assert [m for m in tg.sent if m["plain_text"].startswith("Working")] == []  # one message
    assert 2 <= progress["edits"] == len(times) <= 8 + 5
    assert all(b - a >= 1.0 for a, b in itertools.pairwise(times))
    assert "Tool calls: 8" in progress["plain_text"]  # the final state, always shown
    assert buttons(progress) == []  # nothing left to stop
    assert stop_receipts == []


async def test_stop_ends_the_task_at_the_next_safe_point_and_says_what_was_done(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    model = ScriptedRouter(listing(30), latency=0.3)
    settings = settings_for(tg, tmp_path / "home", **QUICK_PROGRESS)
    async with running(tg, settings, models=model) as lancelot:
        tg.user_message("look around my workspace many times")
        await shown(tg, "Working on it")
        await eventually(lambda: progress_of(tg)["edits"] >= 2, 10)
        [stop] = buttons(progress_of(tg))
        tg.press_button(progress_of(tg)["message_id"], stop["callback_data"])
        answer = await shown(tg, "Stopped\n")
        await eventually(lambda: progress_of(tg)["plain_text"].startswith("Stopped"))
        asked = await lancelot.receipts("stop_requested")
        stopped = await lancelot.receipts("task_stopped")
        runs = await lancelot.receipts("tool_run")
        # The old button on another copy (a second phone still shows it): refused as stale.
        copy = await stop_copy(lancelot, stop["callback_data"])
        tg.press_button(int(copy.message_id), stop["callback_data"])
        stale = await shown(tg, "Button not accepted")
        refused = await lancelot.receipts("button_refused")

    assert stop["text"] == "Stop"
    assert "Before the stop:" in answer["plain_text"]
    assert f"{len(runs)} tool runs finished" in answer["plain_text"]
    assert 0 < len(runs) < 30  # it really stopped early
    assert model.left() > 0
    [request] = asked
    assert json.loads(request.metadata)["by"] == str(OWNER)
    assert json.loads(request.metadata)["via"] == "telegram"
    assert request.quest_id == stopped[0].quest_id
    assert json.loads(stopped[0].metadata)["took_ms"] < 1000
    assert buttons(progress_of(tg)) == []
    assert stale["plain_text"].startswith("Button not accepted")
    assert [r.action_name for r in refused] == ["already used"]


async def test_a_forged_stop_is_refused_and_the_task_runs_on(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    model = ScriptedRouter(listing(6), latency=0.3)
    settings = settings_for(tg, tmp_path / "home", **QUICK_PROGRESS)
    async with running(tg, settings, models=model) as lancelot:
        tg.user_message("look around my workspace")
        progress = await shown(tg, "Working on it")
        [stop] = buttons(progress)
        real = stop["callback_data"]
        forged = real[:-4] + ("AAAA" if not real.endswith("AAAA") else "BBBB")  # its MAC broken
        copy = await stop_copy(lancelot, forged)
        tg.press_button(int(copy.message_id), forged)
        refusal = await shown(tg, "Button not accepted")
        answer = await shown(tg, "Done")
        refused = await lancelot.receipts("button_refused")

    assert "Looked 6 times." in answer["plain_text"]
    assert refusal["plain_text"].startswith("Button not accepted")
    assert [r.action_name for r in refused] == ["forged"]


async def test_stop_with_nothing_running_says_so(tg: FakeTelegram, tmp_path: Path) -> None:
    async with running(tg, settings_for(tg, tmp_path / "home")) as lancelot:
        reply = await lancelot.say("/stop")
        asked = await lancelot.receipts("stop_requested")

    assert reply["plain_text"].startswith("Nothing to stop")
    assert asked == []


async def test_slash_stop_stops_the_chats_task(tg: FakeTelegram, tmp_path: Path) -> None:
    model = ScriptedRouter(listing(30), latency=0.3)
    settings = settings_for(tg, tmp_path / "home", **QUICK_PROGRESS)
    async with running(tg, settings, models=model) as lancelot:
        tg.user_message("look around my workspace many times")
        await shown(tg, "Working on it")
        tg.user_message("/stop")
        ack = await shown(tg, "Stopping 1 task")
        answer = await shown(tg, "Stopped\n")
        stopped = await lancelot.receipts("task_stopped")

    assert "look around my workspace many times" in ack["plain_text"]
    assert "Before the stop:" in answer["plain_text"]
    assert json.loads(stopped[0].metadata)["via"] == "telegram"


class SlowFiles:
    """The real file provider behind a second of delay: an approved change that takes a
    while to apply (as a large copy or a slow disk would)."""

    name = "slow_file_ops"

    def __init__(self, real: CommandRunner, delay: float = 1.0) -> None:
        self._real = real
        self._delay = delay

    async def run(self, action: ToolAction, capability: str | None) -> ToolResult:
        await asyncio.sleep(self._delay)
        return await self._real.run(action, capability)


async def deleting(tg: FakeTelegram, tmp_path: Path) -> tuple[ScriptedRouter, Settings]:
    model = ScriptedRouter(
        [call("delete_file", path="/workspace/old.txt"), *listing(20)], latency=0.3
    )
    return model, settings_for(tg, tmp_path / "home", **QUICK_PROGRESS)


async def test_stop_while_an_approved_change_is_applied_lets_it_finish(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    model, settings = await deleting(tg, tmp_path)
    async with running(tg, settings, models=model) as lancelot:
        kit = lancelot.app.governance
        assert kit is not None
        real = kit.tools.providers("file.delete")[0].runner
        kit.tools.register(SlowFiles(real), ["file.delete"], priority=100, local=True)
        target = lancelot.app.home / "workspace" / "old.txt"
        target.write_text("bye")
        tg.user_message("delete old.txt, then look around")
        approval = await _approval(tg)
        tg.press_button(approval["message_id"], buttons(approval)[0]["callback_data"])
        await until(lancelot, "tool_intent", "file.delete")  # the change has begun
        progress = progress_of(tg)
        tg.press_button(progress["message_id"], buttons(progress)[0]["callback_data"])
        answer = await shown(tg, "Stopped\n")
        await tg.wait_for(lambda: _message(tg, approval)["plain_text"].startswith("Executed"))
        intents = await lancelot.receipts("tool_intent")
        runs = await lancelot.receipts("tool_run")
        stopped = await lancelot.receipts("task_stopped")

    assert not target.exists()  # the approved change was applied in full
    [delete] = [r for r in runs if r.action_name == "file.delete"]
    assert delete.status == "success"
    assert [
        json.loads(i.outputs)["outcome_id"] for i in intents if i.action_name == "file.delete"
    ] == [delete.id]
    assert [r.action_name for r in runs] == ["file.delete"]  # nothing after the stop
    # The stop waited for the change, and the answer counts it among what was done.
    assert json.loads(stopped[0].metadata)["took_ms"] > 300
    assert "1 tool run finished" in answer["plain_text"]
    assert "file.delete" in answer["plain_text"]


async def test_stop_while_the_agent_writes_a_file_lets_the_write_finish(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    model = ScriptedRouter(
        [call("write_file", path="/workspace/new.txt", content="hello"), *listing(20)],
        latency=0.3,
    )
    settings = settings_for(tg, tmp_path / "home", **QUICK_PROGRESS)
    async with running(tg, settings, models=model) as lancelot:
        kit = lancelot.app.governance
        assert kit is not None
        real = kit.tools.providers("file.write")[0].runner
        kit.tools.register(SlowFiles(real), ["file.write"], priority=100, local=True)
        tg.user_message("write new.txt, then look around")
        await until(lancelot, "tool_intent", "file.write")  # the write has begun
        progress = progress_of(tg)
        tg.press_button(progress["message_id"], buttons(progress)[0]["callback_data"])
        answer = await shown(tg, "Stopped\n")
        runs = await lancelot.receipts("tool_run")

    written = lancelot.app.home / "workspace" / "new.txt"
    assert written.read_text() == "hello"  # never half a change
    assert [(r.action_name, r.status) for r in runs] == [("file.write", "success")]
    assert "1 tool run finished" in answer["plain_text"]


async def test_stop_cuts_a_slow_read_only_tool_short(tg: FakeTelegram, tmp_path: Path) -> None:
    model = ScriptedRouter(listing(3), latency=0.1)
    settings = settings_for(tg, tmp_path / "home", **QUICK_PROGRESS)
    async with running(tg, settings, models=model) as lancelot:
        kit = lancelot.app.governance
        assert kit is not None
        real = kit.tools.providers("file.list")[0].runner
        kit.tools.register(SlowFiles(real, delay=30), ["file.list"], priority=100, local=True)
        tg.user_message("look around my workspace")
        await until(lancelot, "tool_call", "list_files")
        await tg.wait_for(lambda: "running list_files" in progress_of(tg)["plain_text"])
        progress = progress_of(tg)
        tg.press_button(progress["message_id"], buttons(progress)[0]["callback_data"])
        answer = await shown(tg, "Stopped\n")
        runs = await lancelot.receipts("tool_run")
        stopped = await lancelot.receipts("task_stopped")

    assert runs == []  # the listing never finished: nothing to report as ran
    outputs, meta = json.loads(stopped[0].outputs), json.loads(stopped[0].metadata)
    assert outputs["cut_short"] == "list_files"
    assert meta["took_ms"] < 1000  # not the 30 s the tool would have taken
    assert "0 tool runs finished" in answer["plain_text"]


async def test_stop_while_an_approval_is_pending_withdraws_it(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    model, settings = await deleting(tg, tmp_path)
    async with running(tg, settings, models=model) as lancelot:
        target = lancelot.app.home / "workspace" / "old.txt"
        target.write_text("bye")
        tg.user_message("delete old.txt, then look around")
        approval = await _approval(tg)
        tg.user_message("/stop")
        answer = await shown(tg, "Stopped\n")
        await tg.wait_for(lambda: _message(tg, approval)["plain_text"].startswith("Denied"))
        denied = await lancelot.receipts("approval_denied")

    assert target.exists()  # nothing ran: the question was withdrawn with the task
    assert buttons(_message(tg, approval)) == []  # no Approve left to tap
    assert "via Stop (telegram)" in _message(tg, approval)["plain_text"]
    assert json.loads(denied[0].outputs)["outcome"].startswith("withdrawn")
    assert "0 tool runs finished" in answer["plain_text"]


async def until(lancelot: Running, action_type: str, name: str) -> None:
    """Wait until a receipt of this type and name is in the ledger."""
    async with asyncio.timeout(10):
        while not any(r.action_name == name for r in await lancelot.receipts(action_type)):  # noqa: ASYNC110 (the ledger has no event to await)
            await asyncio.sleep(0.02)


async def stop_copy(lancelot: Running, token: str) -> MessageRef:
    """Another copy of the progress card with a Stop button holding `token` (an old phone's
    copy, or a crafted one)."""
    shown = MessageRef("telegram", str(OWNER), str(progress_of(lancelot.tg)["message_id"]))
    await eventually(lambda: lancelot.app.bus.card_of(shown) is not None)
    card_id = lancelot.app.bus.card_of(shown)
    assert card_id is not None
    card = Card(CardKind.NOTICE, "Working on it", buttons=(Button("Stop", token),))
    return await lancelot.app.bus.send(
        "telegram", str(OWNER), replace(card, correlation_id=card_id), key=f"copy:{token}"
    )


def _message(tg: FakeTelegram, sent: SentMessage) -> SentMessage:
    return next(m for m in tg.sent if m["message_id"] == sent["message_id"])


async def _approval(tg: FakeTelegram) -> SentMessage:
    await tg.wait_for(lambda: any(b["text"] == "Approve" for m in tg.sent for b in buttons(m)))
    await tg.wait_for(lambda: any(m["plain_text"].startswith("Working") for m in tg.sent))
    return next(m for m in tg.sent if any(b["text"] == "Approve" for b in buttons(m)))
