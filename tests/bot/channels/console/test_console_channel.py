"""The console channel: typed lines become messages, cards print with numbered buttons."""

from __future__ import annotations

import asyncio
import io

import pytest

from bot.app import Lancelot
from bot.channels.console.channel import MAX_LINE, ConsoleChannel
from core.commands.registry import Router
from core.events import Button, Card, CardKind


async def console_for(app: Lancelot) -> tuple[ConsoleChannel, asyncio.StreamReader, io.StringIO]:
    reader = asyncio.StreamReader(limit=MAX_LINE)
    out = io.StringIO()
    console = ConsoleChannel(app.bus, reader, out)
    await app.attach(console)
    return console, reader, out


async def type_line(app: Lancelot, reader: asyncio.StreamReader, line: bytes) -> None:
    reader.feed_data(line)
    await asyncio.sleep(0.05)
    await app.bus.drained()


async def test_typed_command_is_answered(app: Lancelot) -> None:
    _, reader, out = await console_for(app)
    await type_line(app, reader, b"/help\n")
    assert "Commands" in out.getvalue()
    assert "/status - uptime" in out.getvalue()


PRESSED: list[str] = []


async def _choose(ctx: object) -> Card:
    PRESSED.append("yes")
    return Card(kind=CardKind.NOTICE, title="Chosen: yes")


CHOOSE = Router("choose")
CHOOSE.action("choose", _choose)


@pytest.fixture
def pressed() -> list[str]:
    PRESSED.clear()
    return PRESSED


@pytest.mark.app(routers=[CHOOSE])
async def test_buttons_are_numbered_and_picked_by_number(app: Lancelot, pressed: list[str]) -> None:
    _console, reader, out = await console_for(app)
    card_id = "card-42"
    yes = await app.tokens.issue("choose", {}, card_id)
    no = await app.tokens.issue("choose", {}, card_id)
    card = Card(
        CardKind.APPROVAL,
        "Proceed?",
        buttons=(Button("Yes", yes), Button("No", no)),
        correlation_id=card_id,
    )
    await app.bus.send("console", "console", card)
    assert "[1] Yes   [2] No" in out.getvalue()
    await type_line(app, reader, b"1\n")
    assert pressed == ["yes"]
    assert "(updated) [notice] Chosen: yes" in out.getvalue()
    # The old card's numbers are gone: typing 2 now is plain text, not a press.
    await type_line(app, reader, b"2\n")
    assert pressed == ["yes"]


async def test_invalid_utf8_and_huge_lines_do_not_break_the_console(app: Lancelot) -> None:
    console, reader, out = await console_for(app)
    await type_line(app, reader, b"\xff\xfe\xfa\xfb\xfc\n")
    assert "binary data" in out.getvalue()
    await type_line(app, reader, b"y" * (MAX_LINE + 10) + b"\n")
    assert "characters; I take up to" in out.getvalue()
    await type_line(app, reader, b"/status\n")
    assert "Status" in out.getvalue()
    assert not console.closed.is_set()


async def test_end_of_input_closes_the_console(app: Lancelot) -> None:
    console, reader, _ = await console_for(app)
    reader.feed_eof()
    await asyncio.wait_for(console.closed.wait(), 2)


async def test_get_on_the_console_names_the_file_on_this_machine(app: Lancelot) -> None:
    _, reader, out = await console_for(app)
    (app.home / "workspace" / "notes.txt").write_text("hello")
    await type_line(app, reader, b"/get notes.txt\n")
    await type_line(app, reader, b"/get ../secret\n")
    shown = out.getvalue()
    assert f"File: {(app.home / 'workspace' / 'notes.txt').resolve()}" in shown
    assert "'..' is not allowed" in shown
