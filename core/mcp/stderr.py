"""A stdio server's stderr: read through a pipe of ours, never straight onto Lancelot's.

The SDK would hand the server Lancelot's own stderr, where whatever it prints (its
environment, a key in a traceback) lands unredacted. Here each line goes to the log (whose
formatter masks the secrets it knows, this server's among them), and the last few lines are
kept, masked, to explain why the server stopped.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import os
from typing import TextIO

from core.receipts.redaction import Redactor

KEPT_LINES = 5
MAX_LINE = 500  # characters of one line kept for a failure reason


class StderrPipe:
    """A pipe whose write end a server's process gets as its stderr."""

    def __init__(self, server: str, redactor: Redactor) -> None:
        self._log = logging.getLogger(f"core.mcp.server.{server}")
        self._redactor = redactor
        self._tail: collections.deque[str] = collections.deque(maxlen=KEPT_LINES)
        read_fd, write_fd = os.pipe()
        self._reader_file = os.fdopen(read_fd, "rb", buffering=0)
        self.writer: TextIO = os.fdopen(write_fd, "w", encoding="utf-8")
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Begin reading (the process must hold its own copy of the write end by now, so
        ours is closed: the pipe ends when the process does)."""
        self.writer.close()
        self._task = asyncio.get_running_loop().create_task(self._read(), name="mcp stderr")

    async def _read(self) -> None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=1 << 16)
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), self._reader_file
        )
        try:
            while True:
                try:
                    line = await reader.readline()
                except ValueError:  # a line past the limit: skip what is buffered
                    continue
                if not line:
                    return
                self._keep(line.decode("utf-8", "replace").rstrip())
        finally:
            transport.close()

    def _keep(self, line: str) -> None:
        if not line:
            return
        self._log.debug("%s", line)
        self._tail.append(self._redactor.text(line)[:MAX_LINE])  # masked whole, then cut

    async def tail(self, wait: float = 1.0) -> str | None:
        """The server's last stderr line (masked), if it wrote any; waits up to `wait`
        seconds for the pipe to end first (a dying server's last words come late)."""
        if self._task is not None and wait > 0:
            await asyncio.wait([self._task], timeout=wait)
        return self._tail[-1] if self._tail else None

    async def aclose(self) -> None:
        """Stop reading and close both ends."""
        if not self.writer.closed:
            self.writer.close()
        if self._task is not None:
            self._task.cancel()
            await asyncio.wait([self._task])  # ended; our own cancellation is not swallowed
        self._reader_file.close()  # a no-op when the pipe's transport closed it
