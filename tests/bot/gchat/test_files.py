"""Google Chat attachments: Lancelot cannot fetch them here, so it says what it received and
why it kept nothing, and the words that came with them are still handled."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.fakes.gchat import FakeGoogle, texts

from .harness import running, settings_for


def with_attachment(event: dict[str, Any]) -> dict[str, Any]:
    event["message"]["attachment"] = [
        {
            "name": "spaces/AAA/messages/u1/attachments/a1",
            "contentName": "../minutes.pdf",
            "contentType": "application/pdf",
            "attachmentDataRef": {"resourceName": "spaces/AAA/attachments/r1"},
            "source": "UPLOADED_CONTENT",
        }
    ]
    return event


async def test_an_attachment_is_named_and_its_message_still_handled(
    google: FakeGoogle, tmp_path: Path
) -> None:
    async with running(google, settings_for(google, tmp_path / "home")) as lancelot:
        event, _ = lancelot.owner.message_event("/status")
        answer = await lancelot.owner.post(with_attachment(event))
        alone, _ = lancelot.owner.message_event("")
        file_only = await lancelot.owner.post(with_attachment(alone))
        refused = await lancelot.receipts("file_refused")
        inbox = lancelot.app.home / "workspace" / "inbox"

    assert answer.message is not None
    shown = " ".join(texts(answer.message))
    assert "Uptime" in shown or "uptime" in shown  # the command still ran
    assert "../minutes.pdf" in shown
    assert "I can't download files sent on gchat." in shown
    assert file_only.message is not None
    assert "Nothing saved" in " ".join(texts(file_only.message))
    assert json.loads(refused[0].inputs)["name"] == "../minutes.pdf"
    assert not inbox.exists()


async def test_get_on_google_chat_names_the_file_it_cannot_upload(
    google: FakeGoogle, tmp_path: Path
) -> None:
    async with running(google, settings_for(google, tmp_path / "home")) as lancelot:
        (lancelot.app.home / "workspace" / "notes.txt").write_text("hello")
        answer = await lancelot.owner.say("/get notes.txt")
        sent = await lancelot.receipts("file_sent")

    assert answer.message is not None
    shown = " ".join(texts(answer.message))
    assert (
        "I can't send files on gchat: /workspace/notes.txt (1 KB) stays in the workspace." in shown
    )
    assert sent == []
