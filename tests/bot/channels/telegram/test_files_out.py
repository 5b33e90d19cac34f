"""Files out to the phone: /get sends a workspace file (images as photos) through the
workspace guard with a receipt; the agent's send_file does the same under governance."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from core.llm.types import Completion, CompletionRequest
from tests.fakes.scripted_model import ScriptedRouter, call, final, tool_said
from tests.fakes.telegram import FakeTelegram

from .harness import OWNER, running, settings_for

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8


async def test_get_sends_a_workspace_file_as_a_document(tg: FakeTelegram, tmp_path: Path) -> None:
    async with running(tg, settings_for(tg, tmp_path / "home")) as lancelot:
        report = lancelot.app.home / "workspace" / "reports" / "q3.csv"
        report.parent.mkdir(parents=True)
        report.write_bytes(b"month,revenue\njuly,12\n")
        sent = await lancelot.say("/get reports/q3.csv")
        await lancelot.app.drain()  # the receipt follows the upload
        receipts = await lancelot.receipts("file_sent")

    document = sent["document"]
    assert document is not None
    assert sent["chat_id"] == OWNER
    assert document["content"] == b"month,revenue\njuly,12\n"
    assert document["file_name"] == "q3.csv"
    assert json.loads(receipts[0].inputs)["path"] == "/workspace/reports/q3.csv"
    digest = hashlib.sha256(b"month,revenue\njuly,12\n").hexdigest()
    assert json.loads(receipts[0].outputs)["sha256"] == digest


async def test_get_sends_an_image_as_a_photo(tg: FakeTelegram, tmp_path: Path) -> None:
    async with running(tg, settings_for(tg, tmp_path / "home")) as lancelot:
        (lancelot.app.home / "workspace" / "chart.png").write_bytes(PNG)
        sent = await lancelot.say("/get /workspace/chart.png")

    assert sent["photo"] is not None
    assert sent["photo"]["content"] == PNG
    assert sent["document"] is None


async def test_get_refuses_paths_outside_the_workspace(tg: FakeTelegram, tmp_path: Path) -> None:
    async with running(tg, settings_for(tg, tmp_path / "home")) as lancelot:
        (lancelot.app.home / "workspace" / ".env").write_text("TOKEN=not-for-the-phone")
        escape = await lancelot.say("/get ../../etc/passwd")
        absolute = await lancelot.say("/get /etc/passwd")
        secret = await lancelot.say("/get .env")
        missing = await lancelot.say("/get missing.txt")
        folder = await lancelot.say("/get /workspace")
        empty = await lancelot.say("/get")
        sent = await lancelot.receipts("file_sent")

    assert escape["plain_text"].startswith("Not sent")
    assert "'..' is not allowed" in escape["plain_text"]
    assert "must start with /workspace" in absolute["plain_text"]
    assert "sensitive" in secret["plain_text"]
    assert "There is no file /workspace/missing.txt." in missing["plain_text"]
    assert "/workspace is not a file." in folder["plain_text"]
    assert "Which file?" in empty["plain_text"]
    assert sent == []
    assert all(m["document"] is None and m["photo"] is None for m in tg.sent)


async def test_get_refuses_a_file_over_the_limit(tg: FakeTelegram, tmp_path: Path) -> None:
    settings = settings_for(tg, tmp_path / "home", LANCELOT_FILES_MAX_OUT_MB="0.001")
    async with running(tg, settings) as lancelot:
        (lancelot.app.home / "workspace" / "big.bin").write_bytes(b"x" * 5000)
        reply = await lancelot.say("/get big.bin")

    assert "5 KB" in reply["plain_text"]
    assert "LANCELOT_FILES_MAX_OUT_MB" in reply["plain_text"]
    assert not any(c.method.lower() == "senddocument" for c in tg.calls)


async def test_the_agent_sends_the_image_it_made_as_a_photo(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    def answer(request: CompletionRequest) -> Completion:
        said = tool_said(request)
        return final(f"Sent the chart ({said['kind']}).", [("send_file", "/workspace/chart.png")])

    model = ScriptedRouter(
        [call("send_file", path="/workspace/chart.png", caption="Your chart"), answer]
    )
    async with running(tg, settings_for(tg, tmp_path / "home"), models=model) as lancelot:
        (lancelot.app.home / "workspace" / "chart.png").write_bytes(PNG)
        tg.user_message("send me the chart")
        messages = await tg.wait_for_sent(2)
        runs = await lancelot.receipts("tool_run")
        decisions = await lancelot.receipts("policy_decision")

    photo = next(m for m in messages if m["photo"] is not None)
    assert photo["photo"]["content"] == PNG
    assert photo["plain_text"] == "Your chart"
    assert "Sent the chart (ran)." in messages[-1]["plain_text"]
    assert [r.action_name for r in runs] == ["file.send"]
    assert any("T0" in (d.outputs + d.inputs + d.metadata) for d in decisions)


async def test_the_agent_cannot_send_a_file_outside_the_workspace(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    def answer(request: CompletionRequest) -> Completion:
        return final(f"Could not: {tool_said(request)['kind']}.")

    model = ScriptedRouter([call("send_file", path="/etc/passwd"), answer])
    async with running(tg, settings_for(tg, tmp_path / "home"), models=model):
        tg.user_message("send me /etc/passwd")
        messages = await tg.wait_for_sent(1)

    assert all(m["document"] is None and m["photo"] is None for m in tg.sent)
    assert "Could not" in messages[-1]["plain_text"]
