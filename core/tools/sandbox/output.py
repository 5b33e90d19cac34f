"""Collects a command's output without holding more than a head and a tail of it."""

from __future__ import annotations

from collections import deque

from core.tools.base import MAX_OUTPUT, bounded

KEEP = MAX_OUTPUT * 4  # bytes kept from each end; bounded() trims the decoded text further
CEILING = 64 * 1024 * 1024  # past this much output the command is stopped


class OutputSink:
    """The first and last KEEP bytes of a stream, and how much went by in between."""

    def __init__(self) -> None:
        self._head = bytearray()
        self._tail: deque[bytes] = deque()
        self._tail_size = 0
        self.total = 0

    @property
    def overflowed(self) -> bool:
        """More output than anyone should read: the command is stopped."""
        return self.total > CEILING

    def add(self, chunk: bytes) -> None:
        """Take the next piece of the stream."""
        self.total += len(chunk)
        room = KEEP - len(self._head)
        if room > 0:
            self._head += chunk[:room]
            chunk = chunk[room:]
        if not chunk:
            return
        self._tail.append(chunk)
        self._tail_size += len(chunk)
        while self._tail and self._tail_size - len(self._tail[0]) >= KEEP:
            self._tail_size -= len(self._tail.popleft())

    def text(self) -> tuple[str, bool]:
        """The output as bounded text, and whether anything was cut."""
        tail = b"".join(self._tail)[-KEEP:]
        skipped = self.total - len(self._head) - len(tail)
        head = self._head.decode("utf-8", errors="replace")
        rest = tail.decode("utf-8", errors="replace")
        if skipped > 0:
            text = f"{head}\n... [{skipped:,} bytes cut] ...\n{rest}"
            shown, _ = bounded(text)
            return shown, True
        return bounded(head + rest)
