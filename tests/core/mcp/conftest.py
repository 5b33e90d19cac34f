"""Real MCP servers from the package registries: `mcp-server-time` and `mcp-server-git`
(PyPI, the `dev` extra), `@modelcontextprotocol/server-everything` and `server-filesystem`
(npm, installed once into ~/.cache by `npm install --prefix`), started for real over stdio
and streamable HTTP."""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from core.mcp import McpConfig, McpLimits, McpServers, ServerState, load_config
from core.receipts.redaction import Redactor
from core.runtime.tasks import Supervisor
from tests.ci import unavailable
from tests.fakes.processes import spawned

BIN = Path(sys.executable).parent
EVERYTHING = "@modelcontextprotocol/server-everything"
FILESYSTEM = "@modelcontextprotocol/server-filesystem"
NPM_CACHE = Path.home() / ".cache" / "lancelot-tests" / "npm"


def program(name: str) -> str:
    """A console script of this virtualenv (the dev extra's servers)."""
    path = BIN / name
    if not path.exists():
        unavailable(f"{name} is not installed", needs="the dev extra's MCP servers")
    return str(path)


def npm_server(package: str) -> list[str]:
    """The command line of a Node MCP server (its `dist/index.js` under node), installed
    from npm into a cache the first time."""
    npm, node = shutil.which("npm"), shutil.which("node")
    if npm is None or node is None:
        unavailable("npm and node are needed for the Node MCP servers", needs="npm")
    script = NPM_CACHE / "node_modules" / package / "dist" / "index.js"
    if not script.exists():
        NPM_CACHE.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            [npm, "install", "--prefix", str(NPM_CACHE), "--no-audit", "--no-fund", package],
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        if done.returncode != 0 or not script.exists():
            pytest.fail(f"npm install {package} failed: {done.stderr[-2000:]}")
    return [node, str(script)]


@pytest.fixture(scope="session")
def everything() -> list[str]:
    """The command line of server-everything."""
    return npm_server(EVERYTHING)


@pytest.fixture(scope="session")
def filesystem() -> list[str]:
    """The command line of server-filesystem (its allowed directories still to add)."""
    return npm_server(FILESYSTEM)


def write_servers(directory: Path, servers: dict[str, Any]) -> McpConfig:
    """An mcp.json declaring `servers`, loaded."""
    path = directory / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return load_config(path)


FAST = McpLimits(connect_timeout=30.0, call_timeout=10.0, stable_after=60.0)


@contextlib.asynccontextmanager
async def running(
    config: McpConfig, limits: McpLimits = FAST, redactor: Redactor | None = None
) -> AsyncIterator[McpServers]:
    """The supervised servers of `config`, stopped at the end."""
    tasks = Supervisor()
    try:
        async with McpServers(config, redactor or Redactor(), tasks, limits) as servers:
            yield servers
    finally:
        await tasks.aclose()


def settled(state: ServerState) -> bool:
    """Ready, or failed at least once."""
    return state.status in ("ready", "failed", "disabled")


def status_is(status: str) -> Callable[[ServerState], bool]:
    return lambda state: state.status == status


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.asynccontextmanager
async def everything_over_http(command: list[str]) -> AsyncIterator[str]:
    """server-everything serving streamable HTTP on a free port; yields its /mcp URL."""
    port = free_port()
    env = {"PATH": "/usr/bin:/bin", "PORT": str(port)}
    async with spawned(
        *command, "streamableHttp", env=env,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
    ):  # fmt: skip
        async with asyncio.timeout(30):
            while True:
                try:
                    _, writer = await asyncio.open_connection("127.0.0.1", port)
                except OSError:
                    await asyncio.sleep(0.05)
                    continue
                writer.close()
                await writer.wait_closed()
                break
        yield f"http://127.0.0.1:{port}/mcp"
