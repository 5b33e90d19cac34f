"""What the fake model servers share: a loopback aiohttp server, a script, injected faults."""

from __future__ import annotations

import asyncio
import json
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Self

from aiohttp import web


@dataclass(frozen=True)
class Reply:
    """One scripted answer, written in each API's own JSON by the fake that sends it.

    `json` is a structured answer (response_format / forced tool / responseSchema);
    `tool_calls` are (name, arguments) pairs. Token counts default to a size estimate.
    """

    text: str = ""
    tool_calls: tuple[tuple[str, dict[str, Any]], ...] = ()
    json: Any = None
    input_tokens: int | None = None
    output_tokens: int | None = None


@dataclass(frozen=True)
class Fault:
    """An injected HTTP error: status, optional Retry-After, and which model it hits."""

    status: int
    retry_after: float | None = None
    model: str | None = None


@dataclass
class Seen:
    """A request the fake received: path, model, JSON body."""

    path: str
    model: str
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


class FakeModelServer:
    """Base of the OpenAI, Anthropic and Gemini fakes: `async with Fake() as fake:`.

    Script answers with `reply(...)`, break it with `fail_next(...)` or `go_down()`, and read
    `requests` (what the real SDK sent) and `usage_sent` (the token counts answered).
    """

    def __init__(self) -> None:
        self.requests: list[Seen] = []
        self.usage_sent: list[tuple[int, int]] = []
        self._script: deque[Reply] = deque()
        self._faults: deque[Fault] = deque()
        self._down_models: set[str] = set()
        self._down = False
        self.default = Reply(text="fake answer")  # once the script is used up
        # Answers each request from its body once the script is used up (a model that
        # reads its context: tests/core/agent/attacks/obedient.py).
        self.responder: Callable[[dict[str, Any]], Reply] | None = None
        self._runner: web.AppRunner | None = None
        self.port = 0

    def routes(self, app: web.Application) -> None:
        """Add the API's routes (subclasses)."""
        raise NotImplementedError

    def error_body(self, status: int) -> dict[str, Any]:
        """The API's error JSON (subclasses)."""
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        app = web.Application()
        self.routes(app)
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await runner.setup()
        try:
            await web.TCPSite(runner, "127.0.0.1", 0).start()
        except BaseException:
            await runner.cleanup()
            raise
        self.port = runner.addresses[0][1]
        self._runner = runner
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def root(self) -> str:
        """http://127.0.0.1:PORT"""
        return f"http://127.0.0.1:{self.port}"

    # scripting

    def reply(self, *replies: Reply) -> None:
        """Answer the next requests with these, in order (then `default`)."""
        self._script.extend(replies)

    def fail_next(
        self,
        status: int,
        times: int = 1,
        *,
        retry_after: float | None = None,
        model: str | None = None,
    ) -> None:
        """The next `times` requests (for `model`, if named) get this HTTP error."""
        self._faults.extend(Fault(status, retry_after, model) for _ in range(times))

    def go_down(self, model: str | None = None) -> None:
        """Every request (for `model`, if named) gets 503 until `come_back`."""
        if model is None:
            self._down = True
        else:
            self._down_models.add(model)

    def come_back(self) -> None:
        """Answer normally again."""
        self._down = False
        self._down_models.clear()

    def tool_results(self, seen: Seen) -> list[str]:
        """The tool results a request carried back to the model, in order (subclasses read
        their API's encoding: a tool message, a tool_result block, a functionResponse part)."""
        raise NotImplementedError

    def models_called(self) -> list[str]:
        """The model of every request received, in order."""
        return [r.model for r in self.requests]

    # serving

    async def serve(
        self, request: web.Request, model: str
    ) -> tuple[Reply, dict[str, Any]] | web.Response:
        """Record the request; return the injected error, or the next reply and the body."""
        try:
            body = await request.json()
        except json.JSONDecodeError:
            return web.json_response(self.error_body(400), status=400)
        self.requests.append(Seen(request.path, model, body, dict(request.headers)))
        await asyncio.sleep(0)
        if self._down or model in self._down_models:
            return web.json_response(self.error_body(503), status=503)
        fault = next((f for f in self._faults if f.model in (None, model)), None)
        if fault is not None:
            self._faults.remove(fault)
            headers = (
                {"retry-after": f"{fault.retry_after:g}"} if fault.retry_after is not None else {}
            )
            return web.json_response(
                self.error_body(fault.status), status=fault.status, headers=headers
            )
        if self._script:
            return self._script.popleft(), body
        if self.responder is not None:
            return self.responder(body), body
        return self.default, body

    def tokens(self, reply: Reply, body: dict[str, Any], answer: str) -> tuple[int, int]:
        """Token counts to report: scripted, or about four characters a token; remembered."""
        counted = (
            reply.input_tokens
            if reply.input_tokens is not None
            else max(1, len(json.dumps(body)) // 4),
            reply.output_tokens if reply.output_tokens is not None else max(1, len(answer) // 4),
        )
        self.usage_sent.append(counted)
        return counted
