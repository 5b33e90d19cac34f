"""The console as a new user meets it: dead button numbers, edited cards, its web address,
requests read from a file."""

from __future__ import annotations

import asyncio
import io
import os
import socket
import subprocess
import sys
from pathlib import Path

import aiohttp
import pytest

from bot.app import Lancelot
from bot.channels.console.channel import MAX_LINE, ConsoleChannel
from bot.runner import owner_book
from core.commands.registry import CommandContext, Router
from core.events import Button, Card, CardKind
from tests.fakes.processes import reap, spawn

REPO = Path(__file__).resolve().parents[4]


async def console_for(app: Lancelot, **kwargs: str) -> tuple[asyncio.StreamReader, io.StringIO]:
    reader = asyncio.StreamReader(limit=MAX_LINE)
    out = io.StringIO()
    await app.attach(ConsoleChannel(app.bus, reader, out, tasks=app.tasks, **kwargs))
    return reader, out


async def type_line(app: Lancelot, reader: asyncio.StreamReader, line: bytes) -> None:
    reader.feed_data(line)
    await asyncio.sleep(0.05)
    await app.bus.drained()


async def _decide(ctx: CommandContext) -> Card:
    return Card(kind=CardKind.NOTICE, title="Decided")


DECIDE = Router("decide")
DECIDE.action("decide", _decide)


@pytest.mark.app(routers=[DECIDE])
async def test_a_card_updated_once_is_printed_once_more(app: Lancelot) -> None:
    reader, out = await console_for(app)
    token = await app.tokens.issue("decide", {}, "card-7")
    card = Card(CardKind.APPROVAL, "Go?", buttons=(Button("Go", token),), correlation_id="card-7")
    await app.bus.send("console", "console", card)
    await type_line(app, reader, b"1\n")
    assert out.getvalue().count("Decided") == 1, out.getvalue()
    later = Card(kind=CardKind.NOTICE, title="Went ahead", correlation_id="card-7")
    await app.bus.update("card-7", later)
    await app.bus.update("card-7", later)  # the same content edited in again
    assert out.getvalue().count("(updated) [notice] Went ahead") == 1, out.getvalue()


@pytest.mark.app(routers=[DECIDE])
async def test_old_and_unknown_button_numbers_get_a_short_answer(app: Lancelot) -> None:
    reader, out = await console_for(app)
    token = await app.tokens.issue("decide", {}, "card-8")
    card = Card(CardKind.APPROVAL, "Go?", buttons=(Button("Go", token),), correlation_id="card-8")
    await app.bus.send("console", "console", card)
    await type_line(app, reader, b"1\n")
    await app.ledger.flush()
    before = await app.ledger.count()
    await type_line(app, reader, b"1\n")
    await type_line(app, reader, b"7\n")
    shown = out.getvalue()
    assert "Button 1 is no longer active (its card was answered or replaced)." in shown
    assert "There is no button 7" in shown
    await app.ledger.flush()
    assert await app.ledger.count() == before  # nothing went on to the agent


async def test_clear_and_ctrl_l_clear_the_screen_and_reach_nobody(app: Lancelot) -> None:
    reader, out = await console_for(app, color=True)  # color: a terminal
    await app.ledger.flush()
    before = await app.ledger.count()
    for line in (b"clear\n", b"CLS\n", b"\x0c\n"):
        await type_line(app, reader, line)
    assert out.getvalue().count("\x1b[2J\x1b[H") == 3
    await app.ledger.flush()
    assert await app.ledger.count() == before  # no request, no receipt
    await type_line(app, reader, b"\x0c/help\n")  # Ctrl-L, then a command on the same line
    assert out.getvalue().count("\x1b[2J\x1b[H") == 4
    assert "/status" in out.getvalue()


async def test_the_web_address_is_shown_at_start(app: Lancelot) -> None:
    _, out = await console_for(app, web_url="http://127.0.0.1:8080")
    assert "Receipts and health on http://127.0.0.1:8080" in out.getvalue().splitlines()[1]


def test_chat_reads_requests_from_a_file(tmp_path: Path) -> None:
    requests = tmp_path / "requests.txt"
    requests.write_text("/status\n/help\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TELEGRAM_", "GCHAT_"))}
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env.update(LANCELOT_HOME=str(tmp_path / "home"), LANCELOT_WEB_PORT=str(port))
    with requests.open("rb") as stdin:
        result = subprocess.run(
            [sys.executable, "-m", "bot.cli", "chat"],
            stdin=stdin, capture_output=True, text=True, env=env, cwd=REPO, timeout=120,
        )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "Pipe transport" not in result.stderr
    assert "Status" in result.stdout
    assert "/status - uptime" in result.stdout
    assert f"Receipts and health on http://127.0.0.1:{port}" in result.stdout
    # Once started, what start built is kept out of the garbage collector's full passes.
    assert "start-up heap frozen" in (tmp_path / "home/logs/lancelot.log").read_text()


async def test_run_without_the_sandbox_says_why_it_did_not_run_and_logs_stay_in_the_log(
    tmp_path: Path,
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TELEGRAM_", "GCHAT_"))}
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env.update(
        LANCELOT_HOME=str(tmp_path / "home"),
        LANCELOT_WEB_PORT=str(port),
        DOCKER_HOST=f"unix://{tmp_path}/no-engine.sock",  # a machine without Docker
    )
    chat = await spawn(
        sys.executable, "-m", "bot.cli", "chat",
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=REPO,
    )  # fmt: skip
    assert chat.stdin is not None
    assert chat.stdout is not None
    assert chat.stderr is not None
    seen: list[str] = []

    async def until(text: str) -> None:
        while not any(text in line for line in seen):
            line = await asyncio.wait_for(chat.stdout.readline(), 60)  # type: ignore[union-attr]
            assert line, "".join(seen)
            seen.append(line.decode())

    try:
        chat.stdin.write(b"/run echo hi > b.txt\n")
        await until("[1] Approve")
        chat.stdin.write(b"1\n")
        await until("lancelot doctor")
    finally:
        chat.stdin.close()
        errors = (await asyncio.wait_for(chat.stderr.read(), 60)).decode()
        await asyncio.wait_for(chat.wait(), 60)
        await reap(chat)
    shown = "".join(seen)
    assert "[approval] Not run" in shown
    assert "Not run: nothing here can run it right now." in shown
    assert "- the sandbox: " in shown
    assert "- this machine: host execution is off" in shown
    assert "Executed" not in shown
    assert "WARNING" not in errors  # warnings go to the log file
    assert "WARNING" not in shown
    assert "tool provider docker skipped" in (tmp_path / "home/logs/lancelot.log").read_text()
    assert not (tmp_path / "home/workspace/b.txt").exists()


@pytest.mark.app(web=True, env={"LANCELOT_WEB_HOST": "0.0.0.0", "LANCELOT_WEB_PORT": "0"})  # noqa: S104
async def test_a_wildcard_bind_address_is_shown_as_an_address_a_browser_can_use(
    app: Lancelot,
) -> None:
    assert app.web_url == f"http://localhost:{app.web_port}"  # as in the container
    async with aiohttp.ClientSession() as http, http.get(f"{app.web_url}/health/live") as live:
        assert live.status == 200


async def test_status_on_the_console_alone_says_the_console_is_the_owners(app: Lancelot) -> None:
    owner_book(app)
    reader, out = await console_for(app)
    await type_line(app, reader, b"/status\n")
    shown = out.getvalue()
    assert "Owner" in shown
    assert "none on Telegram or Google Chat yet (the console is always the owner's)" in shown
