"""The console channel: reads lines from a terminal, prints cards, numbers their buttons."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import stat
import sys
from collections import OrderedDict
from pathlib import Path
from types import TracebackType
from typing import BinaryIO, Self, TextIO

from bot.channels.console.render import render_card
from core.bus import Bus
from core.errors import DeliveryFailed
from core.events import ButtonPress, Card, Inbound, MessageRef
from core.runtime.tasks import Supervisor

log = logging.getLogger(__name__)

NAME = "console"
OWNER = "console"
MAX_LINE = 1 << 20
SHOWN_CARDS = 256  # recent cards whose content is remembered
CLEAR_WORDS = frozenset({"clear", "cls"})  # a terminal's words for a clean screen
CLEAR_SCREEN = "\x1b[2J\x1b[H"  # erase the screen, cursor home


class ConsoleChannel:
    """A terminal conversation. The person at the terminal is the owner."""

    name = NAME

    def __init__(
        self,
        bus: Bus,
        reader: asyncio.StreamReader,
        output: TextIO = sys.stdout,
        *,
        color: bool = False,
        prompt: str = "you> ",
        tasks: Supervisor | None = None,
        web_url: str | None = None,
        one_at_a_time: bool = False,
    ) -> None:
        self._bus = bus
        # Input from a file or a pipe: each line is answered before the next is read, so the
        # answers come in the order asked and a number on the next line picks a button of the
        # card just printed. A person at a terminal can type on meanwhile (/stop).
        self._one_at_a_time = one_at_a_time
        self._supervisor = tasks or Supervisor()
        self._reader = reader
        self._out = output
        self._color = color
        self._prompt = prompt
        self._web_url = web_url
        self._ids = itertools.count(1)
        self._choices: dict[int, tuple[str, MessageRef]] = {}
        self._shown: OrderedDict[MessageRef, Card] = OrderedDict()  # what each card shows now
        self._next_choice = 1
        self._task: asyncio.Task[None] | None = None
        self.closed = asyncio.Event()

    @property
    def owner_chat_ids(self) -> tuple[str, ...]:
        """The terminal is the only chat."""
        return (OWNER,)

    async def __aenter__(self) -> Self:
        self._write("Lancelot console. Type /help for commands, Ctrl-D to leave.")
        if self._web_url:
            self._write(f"Receipts and health on {self._web_url} (/receipts gives a sign-in link).")
        self._task = self._supervisor.spawn(self._read_forever(), name="console-reader")
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _read_forever(self) -> None:
        self._show_prompt()
        try:
            while True:
                raw = await self._read_line()
                if raw is None:
                    return
                text = raw.decode("utf-8", errors="replace").strip()
                if b"\x0c" in raw or text.lower() in CLEAR_WORDS:
                    self._clear()
                    text = "" if text.lower() in CLEAR_WORDS else text.replace("\x0c", "")
                if text.isdigit() and int(text) not in self._choices:
                    self._answer_dead_number(int(text))
                elif text:
                    await self._bus.publish(self._event_for(text))
                    if self._one_at_a_time:
                        await self._bus.drained()
                else:
                    self._show_prompt()
        finally:
            self.closed.set()

    def _clear(self) -> None:
        """`clear`, `cls` or Ctrl-L: what a terminal means by them, never a request (on a
        terminal the screen is cleared; into a file or a pipe nothing is written)."""
        if self._color:
            self._write(CLEAR_SCREEN, end="")

    def _answer_dead_number(self, number: int) -> None:
        """A number typed alone is meant as a button: never send it to the agent as a request."""
        if number < self._next_choice:
            self._write(f"Button {number} is no longer active (its card was answered or replaced).")
        else:
            self._write(f"There is no button {number}; the numbers in [brackets] are the buttons.")
        self._show_prompt()

    async def _read_line(self) -> bytes | None:
        try:
            raw = await self._reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:
            return exc.partial or None
        except asyncio.LimitOverrunError as exc:
            # An enormous line: pass on its first MAX_LINE bytes so the size check refuses it.
            raw = await self._reader.readexactly(exc.consumed)
            await self._skip_rest_of_line()
        return raw

    async def _skip_rest_of_line(self) -> None:
        while True:
            try:
                await self._reader.readuntil(b"\n")
                return
            except asyncio.LimitOverrunError as exc:
                await self._reader.readexactly(exc.consumed)
            except asyncio.IncompleteReadError:
                return

    def _event_for(self, text: str) -> Inbound | ButtonPress:
        if text.isdigit() and int(text) in self._choices:
            token, ref = self._choices[int(text)]
            return ButtonPress(NAME, OWNER, OWNER, ref, token)
        ref = MessageRef(NAME, OWNER, f"in-{next(self._ids)}")
        return Inbound(NAME, OWNER, OWNER, text, ref)

    async def deliver(self, chat_id: str, card: Card) -> MessageRef:
        """Print a card; number its action buttons."""
        ref = MessageRef(NAME, chat_id, f"out-{next(self._ids)}")
        self._print_card(card, ref, edited=False)
        return ref

    async def edit(self, ref: MessageRef, card: Card) -> None:
        """A terminal can't rewrite the past: print the new version, marked as an update
        (once: the same content edited in again prints nothing)."""
        if self._shown.get(ref) == card:
            return
        self._choices = {n: c for n, c in self._choices.items() if c[1] != ref}
        self._print_card(card, ref, edited=True)

    async def send_file(
        self, chat_id: str, path: Path, caption: str, *, as_photo: bool = False
    ) -> MessageRef:
        """The terminal is on this machine: print where the file is (a FileSending)."""
        ref = MessageRef(NAME, chat_id, f"out-{next(self._ids)}")
        what = "Photo" if as_photo else "File"
        self._write(f"{what}: {path}" + (f"  ({caption})" if caption else ""))
        return ref

    async def typing(self, chat_id: str) -> None:
        """Nothing to show on a terminal."""

    def _print_card(self, card: Card, ref: MessageRef, *, edited: bool) -> None:
        self._shown[ref] = card
        self._shown.move_to_end(ref)
        while len(self._shown) > SHOWN_CARDS:
            self._shown.popitem(last=False)
        first = self._next_choice
        for button in card.buttons:
            if not button.url:
                self._choices[self._next_choice] = (button.action_token, ref)
                self._next_choice += 1
        lead = "\n" if self._prompt else ""
        self._write(lead + render_card(card, first, color=self._color, edited=edited))
        self._show_prompt()

    def _show_prompt(self) -> None:
        if self._prompt:
            self._write(self._prompt, end="")

    def _write(self, text: str, end: str = "\n") -> None:
        try:
            self._out.write(text + end)
            self._out.flush()
        except (OSError, ValueError) as exc:
            raise DeliveryFailed(f"console output closed: {exc}") from None


async def stdin_reader(tasks: Supervisor | None = None) -> asyncio.StreamReader:
    """An asyncio reader over this process's standard input: a terminal, a pipe, or a file
    (`lancelot chat < requests.txt`), which the loop cannot watch, so a thread reads it."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_LINE)
    if stat.S_ISREG(os.fstat(sys.stdin.fileno()).st_mode):
        supervisor = tasks or Supervisor()
        supervisor.spawn(_feed_from_file(sys.stdin.buffer, reader), name="console-file-input")
        return reader
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    return reader


async def _feed_from_file(source: BinaryIO, reader: asyncio.StreamReader) -> None:
    try:
        while chunk := await asyncio.to_thread(source.read, 1 << 16):
            reader.feed_data(chunk)
    finally:
        reader.feed_eof()
