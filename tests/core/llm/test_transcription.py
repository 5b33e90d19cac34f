"""Voice notes heard through each provider's real SDK against its wire fake: OpenAI's
transcription endpoint, Gemini's audio input; Anthropic has none, and says so."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from core.errors import ProviderUnavailable
from core.llm.flagship import FlagshipConfig
from core.llm.transcription import GeminiTranscriber, Lazy, OpenAITranscriber, transcriber_for
from tests.fakes.llm.base import Reply
from tests.fakes.llm.gemini import FakeGemini
from tests.fakes.llm.openai import FakeOpenAI
from tests.fakes.llm.wiring import config_for

AUDIO = b"OggS\x00\x02" + bytes(range(100)) * 10


@pytest.fixture
def note(tmp_path: Path) -> Path:
    path = tmp_path / "voice-1.ogg"
    path.write_bytes(AUDIO)
    return path


async def test_openai_uploads_the_recording_and_returns_the_text(note: Path) -> None:
    async with FakeOpenAI() as fake:
        fake.transcribe_as("  call Anna at nine  ")
        transcriber, _ = transcriber_for(config_for("openai", fake), "gpt-4o-mini-transcribe")
        assert transcriber is not None  # built on this first voice note (see the next test)
        try:
            heard = await transcriber.transcribe(note, "audio/ogg")
        finally:
            await transcriber.aclose()

    assert heard == "call Anna at nine"
    [request] = fake.heard
    assert request.model == "gpt-4o-mini-transcribe"
    assert (request.filename, request.content_type, request.audio) == (
        "voice-1.ogg",
        "audio/ogg",
        AUDIO,
    )


async def test_an_openai_outage_is_provider_unavailable(note: Path) -> None:
    async with FakeOpenAI() as fake:
        fake.go_down()
        transcriber = OpenAITranscriber(config_for("openai", fake))
        try:
            with pytest.raises(ProviderUnavailable):
                await transcriber.transcribe(note, "audio/ogg")
        finally:
            await transcriber.aclose()
    assert len(fake.heard) == 3  # retried as any model call is


async def test_gemini_hears_the_audio_inline(note: Path) -> None:
    async with FakeGemini() as fake:
        fake.reply(Reply(text="buy milk\n"))
        transcriber = GeminiTranscriber(config_for("gemini", fake))
        try:
            heard = await transcriber.transcribe(note, "audio/ogg")
        finally:
            await transcriber.aclose()

    assert heard == "buy milk"
    parts = fake.requests[0].body["contents"][0]["parts"]
    inline = next(p["inlineData"] for p in parts if "inlineData" in p)
    assert inline.get("mimeType", inline.get("mime_type")) == "audio/ogg"
    assert base64.urlsafe_b64decode(inline["data"]) == AUDIO
    assert any("Transcribe" in p.get("text", "") for p in parts)


def test_each_provider_gets_its_own_or_an_honest_no() -> None:
    def config(name: str) -> FlagshipConfig:
        return FlagshipConfig(name, "test-key-not-real", "fast", "deep", "http://127.0.0.1:9")

    for name, kind in (("openai", OpenAITranscriber), ("gemini", GeminiTranscriber)):
        transcriber = transcriber_for(config(name))[0]
        assert isinstance(transcriber, Lazy)
        assert transcriber.name == name
        assert isinstance(transcriber._build(), kind)  # built (SDK imported) on first use
    none, why = transcriber_for(config("anthropic"))
    assert none is None
    assert "Anthropic's API takes no audio" in why
    none, why = transcriber_for(None)
    assert none is None
    assert "need a model provider" in why
