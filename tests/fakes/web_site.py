"""A small website on 127.0.0.1 for WebOps: pages, a large body, redirects, an echoing POST."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import TracebackType
from typing import Self

from aiohttp import web


@dataclass
class Hit:
    """One request the site received."""

    method: str
    path: str
    body: str


@dataclass
class FakeSite:
    """Serves until the context ends; `hits` lists what reached it."""

    hits: list[Hit] = field(default_factory=list)
    port: int = 0
    _runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        """Base URL by IP (what an allowlist of 127.0.0.1 admits)."""
        return f"http://127.0.0.1:{self.port}"

    async def __aenter__(self) -> Self:
        app = web.Application()
        app.router.add_route("*", "/{path:.*}", self._handle)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        assert server is not None
        self.port = server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.text()
        self.hits.append(Hit(request.method, request.path, body))
        path = request.path
        if path == "/hello":
            return web.Response(text="hi there")
        if path == "/big":
            return web.Response(text="x" * 3_000_000)
        if path == "/redirect-in":
            raise web.HTTPFound("/hello")
        if path == "/redirect-out":
            raise web.HTTPFound(f"http://localhost:{self.port}/hello")
        if path == "/echo" and request.method == "POST":
            return web.Response(text=f"got {body}", status=201)
        return web.Response(text="no such page", status=404)
