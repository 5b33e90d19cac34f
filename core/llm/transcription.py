"""Speech to text for voice notes, through the configured provider's own API.

OpenAI has a transcription endpoint (audio.transcriptions); Gemini takes audio as input to
generateContent; Anthropic's API takes no audio at all, so with it voice is saved, not heard.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Protocol

from core.llm.flagship import FlagshipConfig
from core.llm.retry import call_with_retries

OPENAI_MODEL = "whisper-1"
GEMINI_PROMPT = (
    "Transcribe this voice note exactly, in its own language. Reply with the transcript only, "
    "no comments; if nothing is said, reply with nothing."
)
NO_AUDIO = {
    "anthropic": "Anthropic's API takes no audio, so voice notes need OpenAI or Gemini",
}


class Transcriber(Protocol):
    """Turns a recorded file into text. Raises ProviderUnavailable, never an SDK error."""

    name: str

    async def transcribe(self, path: Path, mime: str) -> str:
        """The words spoken in `path` (empty when nothing is said)."""
        ...

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        ...


class OpenAITranscriber:
    """audio.transcriptions.create through the openai SDK (compatible servers too)."""

    def __init__(self, config: FlagshipConfig, model: str | None = None) -> None:
        from core.llm.openai import make_client, translate_error  # the SDK: see Lazy

        self.name = config.name
        self._config = config
        self._model = model or OPENAI_MODEL
        self._client = make_client(config)
        self._errors = translate_error

    async def transcribe(self, path: Path, mime: str) -> str:
        """Upload the recording; the text OpenAI heard."""
        data = await asyncio.to_thread(path.read_bytes)

        async def call() -> str:
            result = await self._client.audio.transcriptions.create(
                model=self._model, file=(path.name, data, mime or "application/octet-stream")
            )
            return result.text.strip()

        return await call_with_retries(self.name, self._config.retry, call, self._errors)

    async def aclose(self) -> None:
        await self._client.close()


class GeminiTranscriber:
    """generateContent with the recording as an inline audio part and a transcribe prompt."""

    def __init__(self, config: FlagshipConfig) -> None:
        from google.genai import types  # the SDK: see Lazy

        from core.llm.gemini import make_client, translate_error

        self.name = config.name
        self._config = config
        self._http, self._client = make_client(config)
        self._errors = translate_error
        self._part = types.Part

    async def transcribe(self, path: Path, mime: str) -> str:
        """Send the recording inline; the model's transcript."""
        data = await asyncio.to_thread(path.read_bytes)
        contents = [
            self._part.from_bytes(data=data, mime_type=mime or "audio/ogg"),
            GEMINI_PROMPT,
        ]

        async def call() -> str:
            response = await self._client.aio.models.generate_content(
                model=self._config.fast_model, contents=contents
            )
            return (response.text or "").strip()

        return await call_with_retries(self.name, self._config.retry, call, self._errors)

    async def aclose(self) -> None:
        await self._client.aio.aclose()
        await self._http.aclose()
        self._client.close()


class Lazy:
    """A transcriber built on its first voice note: importing the openai or google-genai SDK
    costs about half a second of startup each, and most starts never hear a voice note."""

    def __init__(self, name: str, build: Callable[[], Transcriber]) -> None:
        self.name = name
        self._build = build
        self._built: Transcriber | None = None
        self._building = asyncio.Lock()

    async def transcribe(self, path: Path, mime: str) -> str:
        """Build the transcriber if needed (its imports in a thread), then transcribe."""
        async with self._building:
            if self._built is None:
                self._built = await asyncio.to_thread(self._build)
        return await self._built.transcribe(path, mime)

    async def aclose(self) -> None:
        """Close the built transcriber's connections, if it was ever built."""
        if self._built is not None:
            await self._built.aclose()


def transcriber_for(
    config: FlagshipConfig | None, model: str | None = None
) -> tuple[Transcriber | None, str]:
    """The transcriber for the configured flagship provider, or None and why not."""
    if config is None:
        return None, "voice notes need a model provider (LANCELOT_PROVIDER: openai or gemini)"
    if config.name == "openai":
        return Lazy(config.name, partial(OpenAITranscriber, config, model)), ""
    if config.name == "gemini":
        return Lazy(config.name, partial(GeminiTranscriber, config)), ""
    return None, NO_AUDIO.get(config.name, f"{config.name} cannot transcribe voice notes")
