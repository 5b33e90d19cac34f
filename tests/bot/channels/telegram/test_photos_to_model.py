"""A photo sent on Telegram reaches the model as an image, in each provider's own form (OpenAI
image_url data URL, Anthropic base64 image block, Gemini inlineData), with the caption as the
text; too large, it is refused with a note; with no provider, the local model says it cannot
see it. Through python-telegram-bot, the fake Bot API (getFile, the file download) and the
fake model servers the real SDKs talk to."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.llm.base import FakeModelServer
from tests.fakes.llm.wiring import FAKES, base_url
from tests.fakes.telegram import FakeTelegram

from .harness import Running, running, settings_for

PHOTO = b"\xff\xd8\xff\xe0" + bytes(range(256)) * 40  # a JPEG's start, then some bytes
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8
CAPTION = "what is in this picture?"


async def sent_photo(
    tg: FakeTelegram, lancelot: Running, kind: str = "photo", data: bytes = PHOTO, **extra: str
) -> str:
    """Send a picture with a caption as the owner; what the bot said, once it has handled it
    (its messages, as last edited)."""
    before = len(tg.sent)
    tg.user_file(kind, data, **{"caption": CAPTION, **extra})
    await tg.wait_for_sent(before + 1)
    await lancelot.app.drain()
    return "\n".join(message["plain_text"] for message in tg.sent[before:])


def provider_env(name: str, fake: FakeModelServer) -> dict[str, str]:
    """The settings an operator gives for one provider, aimed at its fake."""
    prefix = name.upper()
    return {
        "LANCELOT_PROVIDER": name,
        f"{prefix}_API_KEY": "test-key-not-real",
        f"{prefix}_BASE_URL": base_url(fake),
        "LANCELOT_LLM_RETRY_BASE_SECONDS": "0",
    }


Shown = tuple[str, bytes, str]  # an image as the model got it: media type, bytes, its text


def decoded(data: str) -> bytes:
    """Base64 as the SDK wrote it (google-genai writes the URL-safe alphabet)."""
    return base64.urlsafe_b64decode(data.replace("+", "-").replace("/", "_"))


def openai_images(body: dict[str, Any]) -> list[Shown]:
    """Every image_url part (a data URL) the SDK sent, with the text beside it."""
    found = []
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, list):
            text = " ".join(p["text"] for p in content if p.get("type") == "text")
            urls = [p["image_url"]["url"] for p in content if p["type"] == "image_url"]
            for url in urls:
                head, _, data = url.partition(";base64,")
                found.append((head.removeprefix("data:"), decoded(data), text))
    return found


def anthropic_images(body: dict[str, Any]) -> list[Shown]:
    """Every base64 image block the SDK sent, with the text beside it."""
    found = []
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, list):
            text = " ".join(b["text"] for b in content if b.get("type") == "text")
            sources = [b["source"] for b in content if b.get("type") == "image"]
            found += [(s["media_type"], decoded(s["data"]), text) for s in sources]
    return found


def gemini_images(body: dict[str, Any]) -> list[Shown]:
    """Every inlineData part the SDK sent, with the text beside it (the SDK writes the
    blob's own keys as `mime_type`; the API reads `mimeType` too)."""
    found = []
    for content in body.get("contents", []):
        parts = content.get("parts", [])
        text = " ".join(p["text"] for p in parts if "text" in p)
        blobs = [p["inlineData"] for p in parts if "inlineData" in p]
        found += [(b.get("mimeType", b.get("mime_type")), decoded(b["data"]), text) for b in blobs]
    return found


READERS: dict[str, Callable[[dict[str, Any]], list[Shown]]] = {
    "openai": openai_images,
    "anthropic": anthropic_images,
    "gemini": gemini_images,
}


@pytest.fixture(params=sorted(FAKES))
async def model(request: pytest.FixtureRequest) -> AsyncIterator[tuple[str, FakeModelServer]]:
    async with FAKES[request.param]() as fake:
        yield request.param, fake


def images_sent(name: str, fake: FakeModelServer) -> list[Shown]:
    """Every image (read from the provider's own form) in every request the fake received."""
    return [image for seen in fake.requests for image in READERS[name](seen.body)]


async def test_a_photo_reaches_the_model_as_an_image_with_its_caption(
    tg: FakeTelegram, tmp_path: Path, model: tuple[str, FakeModelServer]
) -> None:
    name, fake = model
    settings = settings_for(tg, tmp_path / "home", **provider_env(name, fake))
    async with running(tg, settings) as lancelot:
        answer = await sent_photo(tg, lancelot)

    sent = images_sent(name, fake)
    assert sent, f"no {name} request carried the photo"
    assert {(mime, data) for mime, data, _ in sent} == {("image/jpeg", PHOTO)}  # whole
    assert all(text.startswith(CAPTION) for _, _, text in sent)  # the caption is the request
    assert "fake answer" in answer


async def test_an_image_sent_as_a_file_is_shown_too(tg: FakeTelegram, tmp_path: Path) -> None:
    async with FAKES["openai"]() as fake:
        settings = settings_for(tg, tmp_path / "home", **provider_env("openai", fake))
        async with running(tg, settings) as lancelot:
            await sent_photo(
                tg, lancelot, "document", PNG, file_name="chart.png", mime_type="image/png"
            )
    assert {(mime, data) for mime, data, _ in images_sent("openai", fake)} == {("image/png", PNG)}


async def test_a_picture_over_the_limit_is_refused_and_never_sent(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    async with FAKES["anthropic"]() as fake:
        env = {**provider_env("anthropic", fake), "LANCELOT_FILES_MAX_IMAGE_MB": "0.005"}
        async with running(tg, settings_for(tg, tmp_path / "home", **env)) as lancelot:
            answer = await sent_photo(tg, lancelot)  # 10 kB, over 5 kB
    assert "Picture not shown" in answer
    assert "I show the model pictures up to" in answer
    assert images_sent("anthropic", fake) == []


async def test_without_a_provider_the_local_model_says_it_cannot_see(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    async with running(tg, settings_for(tg, tmp_path / "home")) as lancelot:
        answer = await sent_photo(tg, lancelot)
    assert "I can't see pictures yet" in answer
    assert "cannot see images" in answer
