"""`lancelot mcp list` (every declared server, its state and its tools with their hints) and
`lancelot mcp test <server>` (start one, list its tools, say how long it took; exit 1 with one
line when it cannot)."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import sys
import time

from bot.mcp import mcp_limits, sandbox_for
from core.config import Settings
from core.mcp import McpConfig, McpLimits, McpServers, ServerState, config_path, load_config
from core.mcp.supervisor import Confinement
from core.receipts.redaction import Redactor
from core.runtime.tasks import Supervisor

EXIT_FAILED = 1


def add_mcp_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `mcp list` and `mcp test <server>` to the CLI."""
    mcp = commands.add_parser("mcp", help="the MCP servers of mcp.json")
    mcp_cmd = mcp.add_subparsers(dest="mcp_command", required=True)
    mcp_cmd.add_parser("list", help="each server's state and its tools")
    test = mcp_cmd.add_parser("test", help="start one server, list its tools, time it")
    test.add_argument("server", help="the server's name in mcp.json")


async def run_mcp(settings: Settings, args: argparse.Namespace, redactor: Redactor) -> int:
    """Run `mcp list` or `mcp test`; the exit code. A bad entry in mcp.json is one line on
    stderr, and the other servers are still listed or tested."""
    config = load_config(config_path(settings))
    for problem in config.problems:
        print(f"lancelot: {problem}", file=sys.stderr)
    with sandbox_for(settings, settings.home) as sandbox:  # for `"sandbox": true` servers
        if args.mcp_command == "list":
            return await _list(config, mcp_limits(settings), redactor, sandbox)
        return await _test(config, args.server, mcp_limits(settings), redactor, sandbox)


def _settled(state: ServerState) -> bool:
    return state.status != "connecting"


async def settle_all(
    config: McpConfig, limits: McpLimits, redactor: Redactor, sandbox: Confinement | None = None
) -> list[ServerState]:
    """Every server's state once each is ready or has failed (or the connect time is up)."""
    tasks = Supervisor()
    try:
        async with McpServers(config, redactor, tasks, limits, sandbox=sandbox) as servers:
            for state in servers.states():
                with contextlib.suppress(TimeoutError):  # then shown as still connecting
                    await servers.wait_for(state.name, _settled, limits.connect_timeout + 5)
            return list(servers.states())
    finally:
        await tasks.aclose()


async def _list(
    config: McpConfig, limits: McpLimits, redactor: Redactor, sandbox: Confinement
) -> int:
    if not config.servers:
        print(f"No MCP servers are declared in {config.path}.")
        return 0
    for state in await settle_all(config, limits, redactor, sandbox):
        print(_headline(state))
        for line in _tool_lines(state):
            print(line)
    return 0


async def _test(
    config: McpConfig, name: str, limits: McpLimits, redactor: Redactor, sandbox: Confinement
) -> int:
    spec = next((spec for spec in config.servers if spec.name == name), None)
    if spec is None:
        known = ", ".join(s.name for s in config.servers) or "none"
        print(
            f"lancelot: no MCP server {name!r} in {config.path} (servers: {known})", file=sys.stderr
        )
        return EXIT_FAILED
    started = time.perf_counter()
    only = dataclasses.replace(config, servers=(spec,))
    (state,) = await settle_all(only, limits, redactor, sandbox)
    took = time.perf_counter() - started
    if state.status != "ready":
        why = state.reason or (
            "disabled in mcp.json" if state.status == "disabled" else "no answer"
        )
        print(
            f"lancelot: mcp test {name}: {state.status} after {took:.1f} s: {why}", file=sys.stderr
        )
        return EXIT_FAILED
    print(f"{name}: ready in {took * 1000:.0f} ms over {state.transport}, {_count(state)}")
    for line in _tool_lines(state):
        print(line)
    return 0


def _count(state: ServerState) -> str:
    return f"{len(state.tools)} tool{'' if len(state.tools) == 1 else 's'}"


def _headline(state: ServerState) -> str:
    """`name  status  transport  N tools` or the reason it is not ready."""
    detail = _count(state) if state.status == "ready" else (state.reason or "")
    return "  ".join(part for part in (state.name, state.status, state.transport, detail) if part)


def _tool_lines(state: ServerState) -> list[str]:
    """Two lines per tool: its name and hints, then its description's first line."""
    lines = []
    for tool in state.tools if state.status == "ready" else ():
        lines.append(f"  {tool.name}  [{tool.hints.describe()}]")
        summary = tool.description.strip().splitlines()[0] if tool.description.strip() else ""
        if summary:
            lines.append(f"      {summary[:120]}")
    return lines
