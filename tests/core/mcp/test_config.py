"""mcp.json: the ecosystem's format read as it is written, one clear line per problem, and a
bad entry never keeps the others from loading."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from core.config import load_settings
from core.mcp import config_path, load_config
from core.mcp.config import HttpServer, StdioServer

REPO = Path(__file__).resolve().parents[3]


def write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "mcp.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def test_both_shapes_load_as_the_ecosystem_writes_them(tmp_path: Path) -> None:
    path = write(tmp_path, {"mcpServers": {
        "time": {"command": "uvx", "args": ["mcp-server-time"], "env": {"TZ": "UTC"}},
        "notes": {"url": "https://notes.example.org/mcp", "headers": {"X-Key": "k-123456"}},
    }})  # fmt: skip
    config = load_config(path)
    assert config.problems == ()
    time, notes = config.servers
    assert isinstance(time.entry, StdioServer)
    assert (time.name, time.entry.command, time.entry.args) == ("time", "uvx", ("mcp-server-time",))
    assert isinstance(notes.entry, HttpServer)
    assert notes.entry.url == "https://notes.example.org/mcp"
    assert config.secrets == ("UTC", "k-123456")


def test_the_mcp_servers_wrapper_may_be_left_out(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, {"git": {"command": "mcp-server-git", "disabled": True}}))
    assert [(s.name, s.entry.disabled) for s in config.servers] == [("git", True)]


def test_no_file_means_no_servers_and_no_problem(tmp_path: Path) -> None:
    config = load_config(tmp_path / "absent.json")
    assert (config.servers, config.problems) == ((), ())


def test_broken_json_is_one_line_naming_the_file_and_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, '{"mcpServers": {\n  "time": {"command": "x",}\n}}')
    config = load_config(path)
    assert config.servers == ()
    (problem,) = config.problems
    assert problem.startswith(f"{path}: line 2:")
    assert "\n" not in problem


def test_a_bad_entry_is_named_and_the_others_still_load(tmp_path: Path) -> None:
    path = write(tmp_path, {"mcpServers": {
        "good": {"command": "mcp-server-time"},
        "typo": {"comand": "mcp-server-git"},
        "web": {"url": "ftp://nowhere", "headers": {"Authorization": "Bearer abcdef123"}},
        "bad name!": {"command": "x"},
        "two__parts": {"command": "x"},
        "x" * 25: {"command": "x"},
        "listy": ["x"],
    }})  # fmt: skip
    config = load_config(path)
    assert [s.name for s in config.servers] == ["good"]
    assert len(config.problems) == 6
    assert all(p.startswith(f"{path}: server ") and "\n" not in p for p in config.problems)
    typo, web, name, parts, long, listy = config.problems
    assert "typo: comand: unknown key" in typo
    assert "web: url: Value error, an http:// or https:// address" in web
    assert "bad name!" in name
    assert "'two__parts': a name is letters, digits, '-' or '_' (24 at most, no '__')" in parts
    assert "x" * 25 in long
    assert "listy: an entry is an object" in listy


def test_a_bad_value_is_never_quoted_it_may_be_a_secret(tmp_path: Path) -> None:
    path = write(tmp_path, {"s": {"command": "x", "env": {"KEY": 123456789}}})
    (problem,) = load_config(path).problems
    assert "123456789" not in problem
    assert "s: env.KEY:" in problem


def test_the_top_level_must_be_an_object(tmp_path: Path) -> None:
    (problem,) = load_config(write(tmp_path, [1, 2])).problems
    assert problem == f"{write(tmp_path, [1, 2])}: the top level must be an object of servers"
    (problem,) = load_config(write(tmp_path, {"mcpServers": []})).problems
    assert "mcpServers must be an object" in problem


def test_the_file_is_in_the_home_unless_the_environment_names_one(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert config_path(load_settings(environ={"LANCELOT_HOME": str(home)})) == home / "mcp.json"
    named = tmp_path / "elsewhere.json"
    settings = load_settings(
        environ={"LANCELOT_HOME": str(home), "LANCELOT_MCP_CONFIG": str(named)}
    )
    assert config_path(settings) == named


def test_reading_the_servers_does_not_load_the_sdk(tmp_path: Path) -> None:
    """Issue 36 counts import time: without a connected server the SDK stays unloaded."""
    path = write(tmp_path, {"time": {"command": "mcp-server-time"}})
    script = (
        "import sys; from pathlib import Path; import core.mcp, bot.app; "
        f"core.mcp.load_config(Path({str(path)!r})); "
        "print(sorted(m for m in sys.modules if m == 'mcp' or m.startswith('mcp.')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, check=True
    )
    assert done.stdout.strip() == "[]"
