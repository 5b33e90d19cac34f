"""A fake Gemini generateContent server (functionCall parts, JSON responses) for google-genai."""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from .base import FakeModelServer, Seen

_STATUS = {400: "INVALID_ARGUMENT", 403: "PERMISSION_DENIED", 429: "RESOURCE_EXHAUSTED"}


class FakeGemini(FakeModelServer):
    """POST /{version}/models/{model}:generateContent; give the SDK `base_url`."""

    @property
    def base_url(self) -> str:
        """What GEMINI_BASE_URL should be."""
        return self.root

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/{version}/models/{call}", self._generate)

    def error_body(self, status: int) -> dict[str, Any]:
        code = _STATUS.get(status, "UNAVAILABLE" if status == 503 else "INTERNAL")
        return {"error": {"code": status, "message": f"fake error {status}", "status": code}}

    def tool_results(self, seen: Seen) -> list[str]:
        """`functionResponse` parts; the adapter puts the text under response.result."""
        return [
            str(part["functionResponse"]["response"].get("result", ""))
            for content in seen.body["contents"]
            for part in content.get("parts", [])
            if "functionResponse" in part
        ]

    async def _generate(self, request: web.Request) -> web.Response:
        model, _, method = request.match_info["call"].partition(":")
        if method != "generateContent":
            return web.json_response(self.error_body(400), status=400)
        served = await self.serve(request, model)
        if isinstance(served, web.Response):
            return served
        reply, body = served
        if not body.get("contents"):
            return web.json_response(self.error_body(400), status=400)
        parts: list[dict[str, Any]] = []
        if reply.json is not None:
            parts.append({"text": json.dumps(reply.json)})
        elif reply.text:
            parts.append({"text": reply.text})
        parts += [{"functionCall": {"name": name, "args": args}} for name, args in reply.tool_calls]
        prompt, answer = self.tokens(reply, body, json.dumps(parts))
        return web.json_response(
            {
                "candidates": [
                    {
                        "content": {"role": "model", "parts": parts},
                        "finishReason": "STOP",
                        "index": 0,
                    }
                ],
                "usageMetadata": {
                    "promptTokenCount": prompt,
                    "candidatesTokenCount": answer,
                    "totalTokenCount": prompt + answer,
                },
                "modelVersion": model,
            }
        )
