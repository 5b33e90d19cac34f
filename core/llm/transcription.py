"""Speech to text for voice notes, through the configured provider's own API.

OpenAI has a transcription endpoint (audio.transcriptions); Gemini takes audio as input to
generateContent; Anthropic's API takes no audio at all, so with it voice is saved, not heard.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Protocol

from google.genai import types

from core.llm.flagship import FlagshipConfig
from core.llm.gemini import make_client as gemini_client
from core.llm.gemini import translate_error as gemini_errors
from core.llm.openai import make_client as openai_client
from core.llm.openai import translate_error as openai_errors
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
        self.name = config.name
        self._config = config
        self._model = model or OPENAI_MODEL
        self._client = openai_client(config)

    async def transcribe(self, path: Path, mime: str) -> str:
        """Upload the recording; the text OpenAI heard."""
        data = await asyncio.to_thread(path.read_bytes)

        async def call() -> str:
            result = await self._client.audio.transcriptions.create(
                model=self._model, file=(path.name, data, mime or "application/octet-stream")
            )
            return result.text.strip()

        return await call_with_retries(self.name, self._config.retry, call, openai_errors)

    async def aclose(self) -> None:
        await self._client.close()


class GeminiTranscriber:
    """generateContent with the recording as an inline audio part and a transcribe prompt."""

    def __init__(self, config: FlagshipConfig) -> None:
        self.name = config.name
        self._config = config
        self._http, self._client = gemini_client(config)

    async def transcribe(self, path: Path, mime: str) -> str:
        """Send the recording inline; the model's transcript."""
        data = await asyncio.to_thread(path.read_bytes)
        contents = [
            types.Part.from_bytes(data=data, mime_type=mime or "audio/ogg"),
            GEMINI_PROMPT,
        ]

        async def call() -> str:
            response = await self._client.aio.models.generate_content(
                model=self._config.fast_model, contents=contents
            )
            return (response.text or "").strip()

        return await call_with_retries(self.name, self._config.retry, call, gemini_errors)

    async def aclose(self) -> None:
        await self._client.aio.aclose()
        await self._http.aclose()
        self._client.close()


def transcriber_for(
    config: FlagshipConfig | None, model: str | None = None
) -> tuple[Transcriber | None, str]:
    """The transcriber for the configured flagship provider, or None and why not."""
    if config is None:
        return None, "voice notes need a model provider (LANCELOT_PROVIDER: openai or gemini)"
    if config.name == "openai":
        return OpenAITranscriber(config, model), ""
    if config.name == "gemini":
        return GeminiTranscriber(config), ""
    return None, NO_AUDIO.get(config.name, f"{config.name} cannot transcribe voice notes")
