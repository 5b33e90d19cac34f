"""The control socket: `lancelot link` asks the running Lancelot for a receipt-page link.

A running Lancelot holds its home's lock, so a second process cannot open the home's
databases to issue a link itself; in a container, `docker exec ... lancelot link` is the
way in without a chat. The running process listens on a Unix socket in its home
(`control.sock`, owner-only, like everything else there): a client writes one request word
and reads one JSON line back. The only request is `link`: a fresh one-time link, recorded
in the ledger as the `/receipts` command's are.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import TracebackType
from typing import Self

from core.config import Settings

log = logging.getLogger(__name__)

SOCKET_FILE = "control.sock"
MAX_REQUEST = 64  # bytes: a request is one word
ANSWER_WITHIN = 10.0  # seconds a client waits; the server gives a request as long
MAX_PATH = 107  # bytes in a Unix socket's path (sun_path holds 108 with the final NUL)

IssueLink = Callable[[], Awaitable[str]]


class ControlSocket:
    """Serves `link` requests on the home's control socket while entered."""

    def __init__(self, home: Path, issue_link: IssueLink) -> None:
        self.path = home / SOCKET_FILE
        self._issue_link = issue_link
        self._server: asyncio.Server | None = None

    async def __aenter__(self) -> Self:
        if len(os.fsencode(self.path)) > MAX_PATH:
            log.warning("%s: the path is too long for a socket; `lancelot link` is off", self.path)
            return self
        self.path.unlink(missing_ok=True)  # the home's lock is ours: any socket here is stale
        old = os.umask(0o177)  # owner-only from the moment it exists
        try:
            self._server = await asyncio.start_unix_server(
                self._serve, path=str(self.path), limit=MAX_REQUEST * 2
            )
        finally:
            os.umask(old)
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self.path.unlink(missing_ok=True)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            async with asyncio.timeout(ANSWER_WITHIN):
                line = await reader.readline()
                writer.write(json.dumps(await self._answer(line)).encode() + b"\n")
                await writer.drain()
        except (TimeoutError, ConnectionError, ValueError) as exc:
            log.info("control socket: a request was dropped: %s", exc)
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    async def _answer(self, line: bytes) -> dict[str, object]:
        request = line.decode("utf-8", "replace").strip()
        if request != "link":
            return {"ok": False, "error": f"unknown request {request[:MAX_REQUEST]!r}; try: link"}
        try:
            return {"ok": True, "url": await self._issue_link()}
        except Exception as exc:  # the owner gets one line; the log the rest
            log.exception("control socket: a link could not be issued")
            return {"ok": False, "error": f"no link could be issued: {exc}"}


def ask(home: Path, request: str) -> dict[str, object]:
    """Send one request to the Lancelot running in `home`; its answer. Raises
    ConnectionError (nothing is listening) or TimeoutError."""
    path = home / SOCKET_FILE
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.settimeout(ANSWER_WITHIN)
        try:
            client.connect(os.fsencode(path))
        except (FileNotFoundError, ConnectionRefusedError) as exc:
            raise ConnectionError(str(exc)) from None
        client.sendall(request.encode() + b"\n")
        answer = client.makefile("rb").readline()
    found = json.loads(answer) if answer else None
    if not isinstance(found, dict):
        raise ConnectionError("the running Lancelot closed the socket without an answer")
    return found


def print_link(settings: Settings) -> int:
    """`lancelot link`: print a one-time receipt-page link from the running Lancelot."""
    home = settings.home.expanduser().resolve()
    if len(os.fsencode(home / SOCKET_FILE)) > MAX_PATH:
        return _fail(f"{home}: the path is too long for the control socket; use /receipts in chat")
    try:
        answer = ask(home, "link")
    except (TimeoutError, ValueError) as exc:  # before OSError: a timeout is one
        return _fail(f"the running Lancelot did not answer: {exc}")
    except OSError as exc:  # ConnectionError among them
        return _fail(
            f"Lancelot is not running with LANCELOT_HOME={home} ({exc}); start it with"
            " `lancelot run`, or point LANCELOT_HOME at the home it runs in"
        )
    if not answer.get("ok"):
        return _fail(str(answer.get("error") or "the running Lancelot refused"))
    print(answer["url"])
    return 0


def _fail(message: str) -> int:
    print(f"lancelot: {message}", file=sys.stderr)
    return 1
