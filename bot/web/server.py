"""Runs the aiohttp app inside Lancelot's own loop with AppRunner/TCPSite."""

from __future__ import annotations

import errno
from types import TracebackType
from typing import Self

from aiohttp import web

from core.errors import StorageError


class WebServer:
    """An async context manager that serves `app` on host:port until exit."""

    def __init__(self, app: web.Application, host: str, port: int) -> None:
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
        self._host = host
        self._port = port
        self.port = port

    async def __aenter__(self) -> Self:
        await self._runner.setup()
        site = web.TCPSite(self._runner, self._host, self._port)
        try:
            await site.start()
        except OSError as exc:
            await self._runner.cleanup()
            where = f"cannot serve the web app on {self._host}:{self._port}"
            if exc.errno == errno.EADDRINUSE:
                raise StorageError(
                    f"{where}: {exc.strerror or exc}; another program uses that port:"
                    " set LANCELOT_WEB_PORT to a free one"
                ) from None
            raise StorageError(
                f"{where}: {exc.strerror or exc} (LANCELOT_WEB_HOST is an address of this"
                " machine: 127.0.0.1, or 0.0.0.0 for all)"
            ) from None
        server = site._server  # the bound port, when 0 asked the OS to choose
        sockets = getattr(server, "sockets", None) or ()
        if sockets:
            self.port = sockets[0].getsockname()[1]
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self._runner.cleanup()
