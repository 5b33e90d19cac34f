"""A fake OpenAI server for the real SDK: Chat Completions (tool_calls, response_format) and
audio transcriptions (multipart upload in, {"text": ...} out)."""

from __future__ import annotations

import json
import secrets
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from aiohttp.web_request import FileField

from .base import FakeModelServer, Seen

_ERROR_TYPES = {400: "invalid_request_error", 401: "invalid_api_key", 429: "rate_limit_exceeded"}


@dataclass(frozen=True)
class Heard:
    """One transcription request: the model asked for, the uploaded file and its bytes."""

    model: str
    filename: str
    content_type: str
    audio: bytes


class FakeOpenAI(FakeModelServer):
    """POST /v1/chat/completions and /v1/audio/transcriptions; give the SDK `base_url`."""

    def __init__(self) -> None:
        super().__init__()
        self.heard: list[Heard] = []
        self._transcripts: deque[str] = deque()

    def transcribe_as(self, *texts: str) -> None:
        """What the next transcription requests answer (then "fake transcript")."""
        self._transcripts.extend(texts)

    @property
    def base_url(self) -> str:
        """What OPENAI_BASE_URL should be."""
        return f"{self.root}/v1"

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_post("/v1/audio/transcriptions", self._transcribe)

    def error_body(self, status: int) -> dict[str, Any]:
        kind = _ERROR_TYPES.get(status, "server_error")
        return {"error": {"message": f"fake error {status}", "type": kind, "code": kind}}

    def tool_results(self, seen: Seen) -> list[str]:
        """`{"role": "tool", "content": ...}` messages."""
        return [str(m["content"]) for m in seen.body["messages"] if m.get("role") == "tool"]

    async def _transcribe(self, request: web.Request) -> web.Response:
        if not request.content_type.startswith("multipart/"):
            return web.json_response(self.error_body(400), status=400)
        form = await request.post()
        upload, model = form.get("file"), form.get("model")
        if not isinstance(upload, FileField) or not isinstance(model, str) or not model:
            return web.json_response(self.error_body(400), status=400)
        audio = upload.file.read()
        if not audio:
            return web.json_response(self.error_body(400), status=400)
        self.heard.append(Heard(model, upload.filename, upload.content_type, audio))
        if self._down:
            return web.json_response(self.error_body(503), status=503)
        text = self._transcripts.popleft() if self._transcripts else "fake transcript"
        return web.json_response({"text": text})

    async def _chat(self, request: web.Request) -> web.Response:
        served = await self.serve(request, await _model(request))
        if isinstance(served, web.Response):
            return served
        reply, body = served
        if not isinstance(body.get("messages"), list) or not body["messages"]:
            return web.json_response(self.error_body(400), status=400)
        content = json.dumps(reply.json) if reply.json is not None else reply.text
        calls = [
            {
                "id": f"call_{secrets.token_hex(6)}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
            for name, args in reply.tool_calls
        ]
        prompt, completion = self.tokens(reply, body, content + json.dumps(calls))
        message: dict[str, Any] = {"role": "assistant", "content": content or None}
        if calls:
            message["tool_calls"] = calls
        return web.json_response(
            {
                "id": f"chatcmpl-{secrets.token_hex(6)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "message": message,
                        "finish_reason": "tool_calls" if calls else "stop",
                        "logprobs": None,
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt,
                    "completion_tokens": completion,
                    "total_tokens": prompt + completion,
                },
            }
        )


async def _model(request: web.Request) -> str:
    try:
        return str((await request.json()).get("model", ""))
    except (ValueError, AttributeError):
        return ""
