"""A web port already in use stops startup with a line that says what to change."""

from __future__ import annotations

import socket

import pytest
from aiohttp import web

from bot.web.server import WebServer
from core.errors import StorageError


async def test_a_port_in_use_says_to_set_lancelot_web_port() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(StorageError) as caught:
            async with WebServer(web.Application(), "127.0.0.1", port):
                pass
    assert str(caught.value).endswith(
        "another program uses that port: set LANCELOT_WEB_PORT to a free one"
    )
    assert f"127.0.0.1:{port}" in str(caught.value)
