"""A fake Anthropic Messages server (tool_use blocks, forced tool_choice) for the real SDK."""

from __future__ import annotations

import json
import secrets
from typing import Any

from aiohttp import web

from .base import FakeModelServer, Seen

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    429: "rate_limit_error",
    529: "overloaded_error",
}


class FakeAnthropic(FakeModelServer):
    """POST /v1/messages; give the SDK `base_url`."""

    @property
    def base_url(self) -> str:
        """What ANTHROPIC_BASE_URL should be."""
        return self.root

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/messages", self._messages)

    def error_body(self, status: int) -> dict[str, Any]:
        kind = _ERROR_TYPES.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": f"fake error {status}"}}

    def tool_results(self, seen: Seen) -> list[str]:
        """`tool_result` blocks in user turns (content as text, or as text blocks)."""
        found = []
        for message in seen.body["messages"]:
            blocks = message["content"] if isinstance(message["content"], list) else []
            for block in blocks:
                if block.get("type") == "tool_result":
                    found.append(_text(block.get("content", "")))
        return found

    async def _messages(self, request: web.Request) -> web.Response:
        try:
            model = str((await request.json()).get("model", ""))
        except (ValueError, AttributeError):
            model = ""
        served = await self.serve(request, model)
        if isinstance(served, web.Response):
            return served
        reply, body = served
        if "max_tokens" not in body or not body.get("messages"):
            return web.json_response(self.error_body(400), status=400)
        content: list[dict[str, Any]] = []
        forced = (body.get("tool_choice") or {}).get("name")
        if reply.json is not None and forced:
            content.append(_tool_use(forced, reply.json))
        elif reply.json is not None:
            content.append({"type": "text", "text": json.dumps(reply.json)})
        elif reply.text:
            content.append({"type": "text", "text": reply.text})
        content += [_tool_use(name, args) for name, args in reply.tool_calls]
        used, made = self.tokens(reply, body, json.dumps(content))
        tool_used = any(block["type"] == "tool_use" for block in content)
        return web.json_response(
            {
                "id": f"msg_{secrets.token_hex(8)}",
                "type": "message",
                "role": "assistant",
                "model": body["model"],
                "content": content,
                "stop_reason": "tool_use" if tool_used else "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": used, "output_tokens": made},
            }
        )


def _tool_use(name: str, arguments: Any) -> dict[str, Any]:
    return {
        "type": "tool_use",
        "id": f"toolu_{secrets.token_hex(8)}",
        "name": name,
        "input": arguments,
    }


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content)
    return str(content)
