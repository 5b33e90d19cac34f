"""`lancelot mcp list` and `lancelot mcp test <server>` as a person runs them, against the real
mcp-server-time and mcp-server-git."""

from __future__ import annotations

import json
import secrets
import sys
from pathlib import Path

import pytest

from bot.app import redactor_for
from core.config import load_settings
from core.receipts.redaction import MASK
from tests.bot.test_cli import env_for, lancelot
from tests.core.mcp.test_sandboxed import probe_in_workspace

pytestmark = pytest.mark.timeout(180)
BIN = Path(sys.executable).parent


def declare(tmp_path: Path, servers: dict[str, object]) -> Path:
    path = tmp_path / "servers.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


def test_list_shows_each_server_its_state_and_its_tools_with_their_hints(tmp_path: Path) -> None:
    path = declare(tmp_path, {
        "time": {"command": str(BIN / "mcp-server-time")},
        "git": {"command": str(BIN / "mcp-server-git"), "args": ["-r", str(tmp_path / "none")]},
        "off": {"command": "anything", "disabled": True},
        "typo": {"comand": "mcp-server-time"},
    })  # fmt: skip
    done = lancelot("mcp", "list", env=env_for(tmp_path / "home", LANCELOT_MCP_CONFIG=str(path)))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "time  ready  stdio  2 tools" in lines
    assert "  get_current_time  [read-only, not destructive, idempotent, not open-world]" in lines
    assert "git  failed  stdio  the connection to the server closed; it said: " in done.stdout
    assert "does not exist" in done.stdout
    assert "off  disabled  stdio" in lines
    assert done.stderr == f"lancelot: {path}: server typo: comand: unknown key\n"


def test_test_times_one_server(tmp_path: Path) -> None:
    path = declare(tmp_path, {"time": {"command": str(BIN / "mcp-server-time")}})
    done = lancelot(
        "mcp", "test", "time", env=env_for(tmp_path / "home", LANCELOT_MCP_CONFIG=str(path))
    )
    assert done.returncode == 0, done.stderr
    first = done.stdout.splitlines()[0]
    assert first.startswith("time: ready in ")
    assert first.endswith(" ms over stdio, 2 tools")


def test_test_fails_in_one_line_for_a_server_that_dies_or_is_not_declared(tmp_path: Path) -> None:
    path = declare(
        tmp_path, {"git": {"command": str(BIN / "mcp-server-git"), "args": ["-r", "/no/repo"]}}
    )
    env = env_for(tmp_path / "home", LANCELOT_MCP_CONFIG=str(path))
    dead = lancelot("mcp", "test", "git", env=env)
    assert dead.returncode == 1
    assert dead.stdout == ""
    assert dead.stderr.startswith("lancelot: mcp test git: failed after ")
    assert dead.stderr.count("\n") == 1
    assert "/no/repo does not exist" in dead.stderr
    absent = lancelot("mcp", "test", "nope", env=env)
    assert absent.returncode == 1
    assert absent.stderr == f"lancelot: no MCP server 'nope' in {path} (servers: git)\n"


def test_no_file_means_no_servers(tmp_path: Path) -> None:
    done = lancelot("mcp", "list", env=env_for(tmp_path / "home"))
    assert done.returncode == 0
    assert done.stdout == f"No MCP servers are declared in {tmp_path / 'home' / 'mcp.json'}.\n"


def test_the_log_redactor_knows_every_servers_secrets(tmp_path: Path) -> None:
    key, token = secrets.token_hex(8), secrets.token_hex(10)  # no known shape: only named
    path = declare(tmp_path, {
        "notes": {"command": "notes-server", "env": {"NOTES_KEY": key}},
        "remote": {"url": "https://mcp.example.org/mcp", "headers": {"X-Notes": token}},
    })  # fmt: skip
    settings = load_settings(
        environ={"LANCELOT_HOME": str(tmp_path / "home"), "LANCELOT_MCP_CONFIG": str(path)}
    )
    redactor = redactor_for(settings)
    assert redactor.text(f"sent {key} then {token}") == f"sent {MASK} then {MASK}"


def test_test_runs_a_sandboxed_server_in_the_sandbox(tmp_path: Path) -> None:
    home = tmp_path / "home"
    path = declare(tmp_path, probe_in_workspace(home))
    done = lancelot("mcp", "test", "probe", env=env_for(home, LANCELOT_MCP_CONFIG=str(path)))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].endswith(" ms over stdio, 3 tools")
