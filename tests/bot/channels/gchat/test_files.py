"""Google Chat attachments: fetched through the Chat API's media download (as the app) into
the inbox, the words that came with them handled; without the Chat API, or for a Drive file,
the reply names each and says why nothing was kept, and the words are still handled."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

from tests.fakes.gchat import FakeGoogle, texts
from tests.fakes.llm.openai import FakeOpenAI

from .harness import SPACE, running, settings_for


def with_attachment(event: dict[str, Any], resource: str | None) -> dict[str, Any]:
    attachment: dict[str, Any] = {
        "name": f"{SPACE}/messages/u1/attachments/a1",
        "contentName": "../minutes.pdf",
        "contentType": "application/pdf",
        "source": "UPLOADED_CONTENT" if resource else "DRIVE_FILE",
    }
    if resource:
        attachment["attachmentDataRef"] = {"resourceName": resource}
    event["message"]["attachment"] = [attachment]
    return event


async def test_an_attachment_is_fetched_into_the_inbox(google: FakeGoogle, tmp_path: Path) -> None:
    pdf = b"%PDF-1.7 minutes of the meeting"
    resource = google.upload(SPACE, pdf)
    async with running(google, settings_for(google, tmp_path / "home")) as lancelot:
        event, _ = lancelot.owner.message_event("/help")
        answer = await lancelot.owner.post(with_attachment(event, resource))
        received = await lancelot.receipts("file_received")
        saved = lancelot.app.home / "workspace" / "inbox" / "minutes.pdf"
        assert saved.read_bytes() == pdf

    assert answer.message is not None
    shown = " ".join(texts(answer.message))
    assert "/get" in shown  # the command that came with it ran: /help lists /get
    assert "/workspace/inbox/minutes.pdf" in shown
    assert json.loads(received[0].outputs)["sha256"] == hashlib.sha256(pdf).hexdigest()
    assert google.media_downloads == [resource]


async def test_without_the_chat_api_or_for_a_drive_file_the_reply_says_why(
    google: FakeGoogle, tmp_path: Path
) -> None:
    resource = google.upload(SPACE, b"%PDF")
    settings = settings_for(google, tmp_path / "home", api=False)
    async with running(google, settings) as lancelot:
        event, _ = lancelot.owner.message_event("/help")
        answer = await lancelot.owner.post(with_attachment(event, resource))
        alone, _ = lancelot.owner.message_event("")
        file_only = await lancelot.owner.post(with_attachment(alone, None))
        refused = await lancelot.receipts("file_refused")
        inbox = lancelot.app.home / "workspace" / "inbox"

    assert answer.message is not None
    shown = " ".join(texts(answer.message))
    assert "/get" in shown  # the command still ran: /help lists /get
    assert "../minutes.pdf" in shown
    assert "attachments need the Chat API (GCHAT_SERVICE_ACCOUNT_FILE)" in shown
    assert file_only.message is not None
    only = " ".join(texts(file_only.message))
    assert "Nothing saved" in only
    assert "a Google Drive file: open it in Drive" in only
    assert json.loads(refused[0].inputs)["name"] == "../minutes.pdf"
    assert google.media_downloads == []
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


async def test_an_uploaded_image_is_shown_to_the_model_with_its_words(
    google: FakeGoogle, tmp_path: Path
) -> None:
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
    resource = google.upload(SPACE, png)
    async with FakeOpenAI() as model:
        env = {
            "LANCELOT_PROVIDER": "openai",
            "OPENAI_API_KEY": "test-key-not-real",
            "OPENAI_BASE_URL": model.base_url,
        }
        async with running(google, settings_for(google, tmp_path / "home", **env)) as lancelot:
            event, _ = lancelot.owner.message_event("what does this chart say?")
            picture = with_attachment(event, resource)
            picture["message"]["attachment"][0].update(
                contentName="chart.png", contentType="image/png"
            )
            await lancelot.owner.post(picture)
            await lancelot.app.drain()
    urls = [
        part["image_url"]["url"]
        for seen in model.requests
        for message in seen.body["messages"]
        if isinstance(message["content"], list)
        for part in message["content"]
        if part["type"] == "image_url"
    ]
    assert urls
    assert set(urls) == {f"data:image/png;base64,{base64.b64encode(png).decode()}"}
