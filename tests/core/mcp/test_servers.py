"""Real servers, started for real: tools listed with their annotations, calls answered,
bounded in time and size, over stdio and streamable HTTP."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from core.mcp import McpLimits, ToolHints
from tests.core.mcp.conftest import (
    everything_over_http,
    program,
    running,
    settled,
    status_is,
    write_servers,
)

pytestmark = pytest.mark.timeout(120)


async def test_the_time_server_lists_its_tools_and_answers(tmp_path: Path) -> None:
    config = write_servers(tmp_path, {"time": {"command": program("mcp-server-time")}})
    async with running(config) as servers:
        state = await servers.wait_for("time", settled, 60)
        assert state.status == "ready", state.reason
        tool = state.tool("get_current_time")
        assert tool is not None
        assert tool.hints == ToolHints(
            read_only=True, destructive=False, idempotent=True, open_world=False
        )
        assert tool.input_schema["required"] == ["timezone"]
        result = await servers.call("time", "get_current_time", {"timezone": "Asia/Tokyo"})
    assert result.ok, result.error
    assert json.loads(result.text)["timezone"] == "Asia/Tokyo"
    assert result.structured["timezone"] == "Asia/Tokyo"
    assert result.size == len(result.text)
    assert result.duration_ms > 0


def git_repository(path: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    identity = ["-c", "user.name=Ada", "-c", "user.email=ada@example.org"]
    subprocess.run(
        ["git", *identity, "-C", str(path), "commit", "-q", "--allow-empty", "-m", "first light"],
        check=True,
    )
    return path


async def test_the_git_server_tells_a_commit_from_a_log(tmp_path: Path) -> None:
    repo = git_repository(tmp_path / "repo")
    config = write_servers(
        tmp_path, {"git": {"command": program("mcp-server-git"), "args": ["-r", str(repo)]}}
    )
    async with running(config) as servers:
        state = await servers.wait_for("git", settled, 60)
        assert state.status == "ready", state.reason
        commit, log, reset = (state.tool(name) for name in ("git_commit", "git_log", "git_reset"))
        assert commit is not None
        assert log is not None
        assert reset is not None
        assert (commit.hints.read_only, log.hints.read_only) == (False, True)
        assert reset.hints.destructive is True
        result = await servers.call("git", "git_log", {"repo_path": str(repo)})
    assert result.ok, result.error
    assert "first light" in result.text


async def test_everything_over_stdio_and_streamable_http(
    tmp_path: Path, everything: list[str]
) -> None:
    async with everything_over_http(everything) as url:
        config = write_servers(tmp_path, {
            "local": {"command": everything[0], "args": [*everything[1:], "stdio"]},
            "remote": {"url": url, "headers": {"X-Client": "lancelot"}},
        })  # fmt: skip
        async with running(config) as servers:
            for name, transport in (("local", "stdio"), ("remote", "http")):
                state = await servers.wait_for(name, settled, 60)
                assert (state.status, state.transport) == ("ready", transport), state.reason
                echo = state.tool("echo")
                assert echo is not None
                assert echo.hints.read_only is True
                result = await servers.call(name, "echo", {"message": f"hello {name}"})
                assert (result.ok, result.text) == (True, f"Echo: hello {name}")


async def test_an_oversized_result_is_cut_and_says_so(
    tmp_path: Path, everything: list[str]
) -> None:
    config = write_servers(tmp_path, {"e": {"command": everything[0], "args": [*everything[1:]]}})
    limits = McpLimits(call_timeout=10.0, max_result_chars=1000)
    async with running(config, limits) as servers:
        await servers.wait_for("e", status_is("ready"), 60)
        result = await servers.call("e", "echo", {"message": "x" * 50_000})
        small = await servers.call("e", "echo", {"message": "short"})
    assert result.truncated
    assert len(result.text) <= 1000
    assert result.size == len("Echo: ") + 50_000
    assert result.text.endswith(f"of {result.size} characters]")
    assert result.text.startswith("Echo: xxx")
    assert (small.truncated, small.text) == (False, "Echo: short")


async def test_a_call_that_hangs_ends_at_the_time_bound_and_the_server_lives_on(
    tmp_path: Path, everything: list[str]
) -> None:
    config = write_servers(tmp_path, {"e": {"command": everything[0], "args": everything[1:]}})
    async with running(config, McpLimits(call_timeout=0.5)) as servers:
        await servers.wait_for("e", status_is("ready"), 60)
        started = time.monotonic()
        slow = await servers.call(
            "e", "trigger-long-running-operation", {"duration": 20, "steps": 2}
        )
        waited = time.monotonic() - started
        after = await servers.call("e", "echo", {"message": "still here"})
    assert slow.error == "no answer in time"
    assert not slow.ok
    assert 0.4 < waited < 3
    assert after.text == "Echo: still here"


async def test_bad_calls_are_said_in_one_line_never_raised(tmp_path: Path) -> None:
    config = write_servers(tmp_path, {
        "time": {"command": program("mcp-server-time")},
        "off": {"command": program("mcp-server-time"), "disabled": True},
    })  # fmt: skip
    async with running(config) as servers:
        await servers.wait_for("time", status_is("ready"), 60)
        unknown_server = await servers.call("nope", "x", {})
        unknown_tool = await servers.call("time", "launch", {})
        not_an_object = await servers.call("time", "get_current_time", ["UTC"])
        disabled = await servers.call("off", "get_current_time", {})
        bad_zone = await servers.call("time", "get_current_time", {"timezone": "Mars/Olympus"})
    assert unknown_server.error == "no MCP server is called 'nope'"
    assert unknown_tool.error == "server time has no tool 'launch'"
    assert not_an_object.error == "the arguments must be an object of named values"
    assert disabled.error == "server off is not ready (disabled)"
    assert bad_zone.is_error
    assert "Mars/Olympus" in bad_zone.text


async def test_lancelot_does_not_wait_for_its_servers(tmp_path: Path) -> None:
    config = write_servers(
        tmp_path, {f"t{n}": {"command": program("mcp-server-time")} for n in range(3)}
    )
    started = time.monotonic()
    async with running(config) as servers:
        entered = time.monotonic() - started
        assert [state.status for state in servers.states()] == ["connecting"] * 3
        assert entered < 0.5
        for state in servers.states():
            assert (await servers.wait_for(state.name, settled, 60)).status == "ready"


async def test_a_sandboxed_server_is_not_started_outside_the_sandbox(tmp_path: Path) -> None:
    config = write_servers(
        tmp_path, {"boxed": {"command": program("mcp-server-time"), "sandbox": True}}
    )
    async with running(config) as servers:
        (state,) = servers.states()
    assert state.status == "failed"
    assert state.reason is not None
    assert "sandbox" in state.reason
