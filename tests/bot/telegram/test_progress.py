"""A long task on the phone: one progress message, edited within Telegram's limits, with a
Stop button; /stop; forged and stale Stops; Stop while an approved change is applied.
Through python-telegram-bot and the fake Bot API."""

from __future__ import annotations

import itertools
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from core.events import Button, Card, CardKind, MessageRef
from core.llm.types import Completion
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


async def test_stop_while_an_approved_change_is_applied_lets_it_finish(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    model = ScriptedRouter(
        [call("delete_file", path="/workspace/old.txt"), *listing(20)], latency=0.3
    )
    settings = settings_for(tg, tmp_path / "home", **QUICK_PROGRESS)
    async with running(tg, settings, models=model) as lancelot:
        target = lancelot.app.home / "workspace" / "old.txt"
        target.write_text("bye")
        tg.user_message("delete old.txt, then look around")
        approval = await _approval(tg)
        progress = progress_of(tg)
        # The owner taps Approve and, a moment later, Stop: both reach Lancelot together.
        tg.press_button(approval["message_id"], buttons(approval)[0]["callback_data"])
        tg.press_button(progress["message_id"], buttons(progress)[0]["callback_data"])
        answer = await shown(tg, "Stopped\n")
        await tg.wait_for(lambda: _message(tg, approval)["plain_text"].startswith("Executed"))
        intents = await lancelot.receipts("tool_intent")
        runs = await lancelot.receipts("tool_run")
        executed = await lancelot.receipts("approval_granted")
        stopped = await lancelot.receipts("task_stopped")

    assert not target.exists()  # the approved change was applied in full
    [delete] = [r for r in runs if r.action_name == "file.delete"]
    assert delete.status == "success"
    assert [
        json.loads(i.outputs)["outcome_id"] for i in intents if i.action_name == "file.delete"
    ] == [delete.id]
    assert len(executed) == 1
    assert len(stopped) == 1
    assert "Before the stop:" in answer["plain_text"]


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
