"""MCP: many tools, few tokens (issue 33: with 500 tools registered, the tool part of a prompt
<= 4,000 tokens).

The tools are real: mcp-server-time and mcp-server-git (and server-everything and
server-filesystem when the tests' npm cache holds them) are started and their tools listed;
copies of those servers under other names make up 500 tools. Measured:

1. The tool part of the first prompt (every tool's name, description and schema as an
   OpenAI-compatible request carries them), in tokens estimated as characters / 4
   (`core.agent.tools.estimated_tokens`; English and JSON run 3.5 to 4.5 characters a token
   on GPT and Gemini tokenizers): every tool offered (how it was before find_tools), and
   as offered now (the built-in tools and find_tools).
2. What a search costs: find_tools' ranking over the 500 tools, median of the queries below.
3. Whether it finds the right tool: the rank of the expected tool for a few requests, among
   different tools (a server's copies rank alike).

Run: .venv/bin/python benchmarks/mcp_tools.py [--tools 500]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path[:] = [str(REPO), *(p for p in sys.path if Path(p or ".").resolve() != HERE)]

import uvloop  # noqa: E402

from core.agent.catalog import built_in_tools  # noqa: E402
from core.agent.mcp_tools import mcp_definition  # noqa: E402
from core.agent.tool_search import ToolIndex, find_tools_definition  # noqa: E402
from core.agent.tools import ToolTable, estimated_tokens  # noqa: E402
from core.config import load_settings  # noqa: E402
from core.mcp import McpLimits, McpServers, ServerState, load_config  # noqa: E402
from core.receipts.redaction import Redactor  # noqa: E402
from core.runtime.tasks import Supervisor  # noqa: E402
from core.tools.definition import ToolSetup  # noqa: E402
from core.tools.tool_registry import ToolRegistry  # noqa: E402
from core.tools.workspace import Workspace  # noqa: E402

BIN = Path(sys.executable).parent
NPM = Path.home() / ".cache" / "lancelot-tests" / "npm" / "node_modules" / "@modelcontextprotocol"
QUERIES = {  # what a model would search for -> the tool that does it
    "current time in Tokyo": "get_current_time",
    "convert a time between time zones": "convert_time",
    "commit the staged changes": "git_commit",
    "show the commit log of my repository": "git_log",
    "create a new branch": "git_create_branch",
    "read a file": "read_file",
    "list the files in a directory": "list_directory",
    "search files by name": "search_files",
}


def declared(tmp: Path) -> dict[str, object]:
    """The real servers this machine has: the dev extra's, and the npm ones if cached."""
    servers: dict[str, object] = {
        "time": {"command": str(BIN / "mcp-server-time")},
        "git": {"command": str(BIN / "mcp-server-git"), "args": ["-r", str(REPO)]},
    }
    for name, package, args in (
        ("everything", "server-everything", []),
        ("files", "server-filesystem", [str(tmp)]),  # its one allowed directory
    ):
        script = NPM / package / "dist" / "index.js"
        if script.exists():
            servers[name] = {"command": "node", "args": [str(script), *args]}
    return servers


async def listed(tmp: Path) -> list[ServerState]:
    """Start the servers, wait until each is ready, and keep what they declared."""
    path = tmp / "mcp.json"
    servers = declared(tmp)
    path.write_text(json.dumps({"mcpServers": servers}))
    tasks = Supervisor()
    states = []
    async with McpServers(load_config(path), Redactor(), tasks, McpLimits()) as running:
        for name in servers:
            state = await running.wait_for(name, lambda s: s.status != "connecting", 60)
            if state.status != "ready":
                raise SystemExit(f"MCP server {name} did not start: {state.reason}")
            states.append(state)
    await tasks.aclose()
    return states


def registry_of(states: list[ServerState], count: int) -> ToolRegistry:
    """The built-in tools, find_tools, and `count` MCP tools: the real servers' tools, then
    copies of the servers under other names (time2, git2, ...) until there are enough."""
    registry = built_in_tools()
    registry.add(find_tools_definition(registry))
    added, copy = 0, 1
    while added < count:
        for state in states:
            named = state if copy == 1 else replace(state, name=f"{state.name}{copy}")
            for tool in state.tools:
                if added == count:
                    return registry
                registry.add(mcp_definition(named, tool))
                added += 1
        copy += 1
    return registry


def measure(states: list[ServerState], count: int, tmp: Path) -> None:
    real = sum(len(s.tools) for s in states)
    print(f"servers: {', '.join(f'{s.name} ({len(s.tools)} tools)' for s in states)}; "
          f"{real} real tools, copied up to {count}")  # fmt: skip
    registry = registry_of(states, count)
    for limit, label in ((count, "every tool offered (before)"), (20, "offered now")):
        settings = load_settings(
            environ={"LANCELOT_HOME": str(tmp), "LANCELOT_MCP_OFFER_ALL_UP_TO": str(limit)}
        )
        setup = ToolSetup(settings, Workspace(tmp / "workspace"))
        specs = ToolTable.offered(registry, setup).specs()
        print(f"{label}: {len(specs)} tools, ~{estimated_tokens(specs):,} tokens")
    index = ToolIndex(registry)
    index.search(setup, "warm", 8)  # the first search reads every tool's words
    timings, ranks = [], []
    for query, expected in QUERIES.items():
        started = time.perf_counter()
        index.search(setup, query, 8)
        timings.append((time.perf_counter() - started) * 1000)
        # The copies of a server rank alike: the rank among different tools is what counts.
        every = index.search(setup, query, count)
        tools = list(dict.fromkeys(name.rsplit("__", 1)[1] for name in every))[:8]
        if expected in {t.name for s in states for t in s.tools}:
            rank = tools.index(expected) + 1 if expected in tools else None
            ranks.append(rank)
            print(f"  {query!r}: {expected} at rank {rank or 'not found'} ({', '.join(tools[:3])})")
    print(f"search over {count} tools: median {statistics.median(timings):.1f} ms")
    print(f"expected tool first in {ranks.count(1)} of {len(ranks)} searches, "
          f"among the first 8 in {sum(r is not None for r in ranks)}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tools", type=int, default=500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        states = uvloop.run(listed(Path(tmp)))
        measure(states, args.tools, Path(tmp))


if __name__ == "__main__":
    main()
