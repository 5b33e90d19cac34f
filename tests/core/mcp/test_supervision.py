"""Servers kept running: a server killed is started again, one that keeps dying waits longer
each time, and a server's secrets stay with that server (never Lancelot's environment given
away, never a server's key in a log line)."""

from __future__ import annotations

import io
import json
import logging
import os
import secrets
import signal
from pathlib import Path

import pytest

from bot.logs import RedactingFormatter
from core.mcp import McpLimits
from core.receipts.redaction import MASK, Redactor
from core.runtime.backoff import BackoffConfig
from tests.core.mcp.conftest import program, running, settled, status_is, write_servers

pytestmark = pytest.mark.timeout(120)

QUICK_RESTARTS = McpLimits(restart=BackoffConfig(min_delay=0.1, max_delay=5.0), stable_after=60)


def pids_with(marker: str) -> list[int]:
    """The processes whose environment holds `marker` (what the test gave one server)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if marker.encode() in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


async def test_a_killed_server_is_started_again(tmp_path: Path) -> None:
    marker = f"LANCELOT_TEST_MARK={secrets.token_hex(8)}"
    name, value = marker.split("=")
    config = write_servers(
        tmp_path, {"time": {"command": program("mcp-server-time"), "env": {name: value}}}
    )
    async with running(config, QUICK_RESTARTS) as servers:
        await servers.wait_for("time", status_is("ready"), 60)
        (first,) = pids_with(marker)
        os.kill(first, signal.SIGKILL)
        failed = await servers.wait_for("time", status_is("failed"), 30)
        assert failed.reason is not None
        assert "closed" in failed.reason
        assert failed.failures == 1
        assert failed.retry_in == pytest.approx(0.1)
        again = await servers.wait_for("time", status_is("ready"), 60)
        (second,) = pids_with(marker)
        result = await servers.call("time", "get_current_time", {"timezone": "UTC"})
    assert second != first
    assert again.failures == 1
    assert result.ok, result.error


async def test_a_server_that_keeps_dying_waits_twice_as_long_each_time(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-repository"
    config = write_servers(
        tmp_path, {"git": {"command": program("mcp-server-git"), "args": ["-r", str(missing)]}}
    )
    async with running(config, QUICK_RESTARTS) as servers:
        state = await servers.wait_for("git", lambda s: s.failures >= 4, 60)
    assert state.status == "failed"
    assert state.delays[:4] == pytest.approx((0.1, 0.2, 0.4, 0.8))
    assert state.reason is not None
    assert f"{missing} does not exist" in state.reason  # the server's own last words


async def test_a_program_that_is_not_there_is_said_plainly(tmp_path: Path) -> None:
    config = write_servers(tmp_path, {"ghost": {"command": str(tmp_path / "nothing-here")}})
    async with running(config, QUICK_RESTARTS) as servers:
        state = await servers.wait_for("ghost", settled, 30)
    assert state.status == "failed"
    assert state.reason == f"cannot start the server: no such program {tmp_path / 'nothing-here'}"


def capture(redactor: Redactor, sink: io.StringIO) -> logging.Handler:
    """A handler taking every log line at DEBUG, formatted as `lancelot run` formats them
    (redacted by `redactor`, the one the servers were given)."""
    handler = logging.StreamHandler(sink)
    handler.setFormatter(RedactingFormatter(redactor, "%(name)s: %(message)s"))
    handler.setLevel(logging.DEBUG)
    return handler


async def test_a_servers_secret_never_reaches_a_log_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "tok-" + secrets.token_hex(12)  # no known shape: only the registration masks it
    # A server that prints its key to stderr, then serves (one that dies the same way).
    leaky = f'echo "starting with key $NOTES_KEY" >&2; exec {program("mcp-server-time")}'
    dying = 'echo "bad key $NOTES_KEY" >&2; exit 3'
    config = write_servers(tmp_path, {
        "leaky": {"command": "sh", "args": ["-c", leaky], "env": {"NOTES_KEY": secret}},
        "dying": {"command": "sh", "args": ["-c", dying], "env": {"NOTES_KEY": secret}},
    })  # fmt: skip
    redactor = Redactor()
    log_lines = io.StringIO()
    root = logging.getLogger()
    handler = capture(redactor, log_lines)
    monkeypatch.setattr(root, "level", logging.DEBUG)
    root.addHandler(handler)
    try:
        async with running(config, QUICK_RESTARTS, redactor) as servers:
            await servers.wait_for("leaky", status_is("ready"), 60)
            dead = await servers.wait_for("dying", lambda s: s.failures >= 2, 60)
    finally:
        root.removeHandler(handler)
    logged = log_lines.getvalue()
    assert f"starting with key {MASK}" in logged  # the line was logged, masked
    assert f"bad key {MASK}" in logged
    assert secret not in logged
    assert dead.reason is not None
    assert dead.reason.endswith(f"it said: bad key {MASK}")


async def test_a_server_gets_its_own_env_and_none_of_lancelots_secrets(
    tmp_path: Path, everything: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    lancelot_key = "sk-" + secrets.token_hex(20)
    monkeypatch.setenv("OPENAI_API_KEY", lancelot_key)
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "123456:" + secrets.token_hex(18))
    own = secrets.token_hex(10)
    config = write_servers(tmp_path, {
        "e": {"command": everything[0], "args": everything[1:], "env": {"NOTES_KEY": own}},
    })  # fmt: skip
    async with running(config) as servers:
        await servers.wait_for("e", status_is("ready"), 60)
        result = await servers.call("e", "get-env", {})
    environment = json.loads(result.text)
    assert environment["NOTES_KEY"] == own
    assert "OPENAI_API_KEY" not in environment
    assert "TELEGRAM_BOT_TOKEN" not in environment
    assert lancelot_key not in result.text
    assert set(environment) <= {"NOTES_KEY", "PATH", "HOME", "LANG", "LC_ALL", "TZ", "TMPDIR",
                                "USER", "LOGNAME", "SHELL", "TERM"}  # fmt: skip


def open_pipes() -> set[str]:
    """The pipes and sockets this process holds open (what a server is talked to through)."""
    found = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue  # the listing's own descriptor, closed already
        if target.startswith(("pipe:", "socket:")):
            found.add(f"{fd} {target}")
    return found


async def test_stopping_stops_every_server_and_lets_go_of_its_pipes(tmp_path: Path) -> None:
    marker = f"LANCELOT_TEST_MARK={secrets.token_hex(8)}"
    name, value = marker.split("=")
    config = write_servers(tmp_path, {
        "time": {"command": program("mcp-server-time"), "env": {name: value}},
        "ghost": {"command": str(tmp_path / "never-installed")},  # fails before it has a pid
    })  # fmt: skip
    before = open_pipes()
    async with running(config, QUICK_RESTARTS) as servers:
        await servers.wait_for("time", status_is("ready"), 60)
        await servers.wait_for("ghost", lambda s: s.failures >= 3, 30)
        assert len(pids_with(marker)) == 1
        assert len(open_pipes() - before) >= 3  # its stdin, stdout and stderr
    assert pids_with(marker) == []
    assert open_pipes() == before
