"""The agent on Telegram: plain words in, an approval card with real buttons, the tap, the
truthful reply; through python-telegram-bot and the fake Bot API."""

from __future__ import annotations

from pathlib import Path

from core.llm.types import Completion, CompletionRequest
from tests.fakes.scripted_model import ScriptedRouter, call, final, tool_said
from tests.fakes.telegram import FakeTelegram

from .harness import OWNER, eventually, running, settings_for


def report(request: CompletionRequest) -> Completion:
    said = tool_said(request)
    if said["kind"] == "ran" and said.get("exit_code") == 0:
        return final("Deleted old.txt.", [("run_command", "rm /workspace/old.txt")])
    return final(f"Nothing was deleted ({said['kind']}).")


async def test_the_owner_approves_the_agents_delete_from_the_chat(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    model = ScriptedRouter(
        [call("run_command", command="rm /workspace/old.txt"), report], latency=0.2
    )
    async with running(tg, settings_for(tg, tmp_path / "home"), models=model) as lancelot:
        target = lancelot.app.home / "workspace" / "old.txt"
        target.write_text("bye")
        approval = await lancelot.say("please delete old.txt")
        assert approval["plain_text"].startswith("Approve these changes?")
        assert "It deletes 1 file: old.txt." in approval["plain_text"]
        assert approval["reply_markup"] is not None
        buttons = approval["reply_markup"]["inline_keyboard"][0]
        assert [b["text"] for b in buttons] == ["Approve", "Deny"]
        assert target.exists()

        before = len(tg.sent)
        tg.press_button(approval["message_id"], buttons[0]["callback_data"])
        reply = (await tg.wait_for_sent(before + 1))[before]
        await eventually(lambda: tg.sent[0]["edits"] >= 1)

    assert not target.exists()
    assert "Deleted old.txt." in reply["plain_text"]
    assert "Correction" not in reply["plain_text"]
    assert tg.sent[0]["plain_text"].startswith("Executed")
    assert any(a.chat_id == OWNER and a.action == "typing" for a in tg.chat_actions)
