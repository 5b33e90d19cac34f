"""MCP: what Lancelot's layer adds to a tool call, and start to ready with 10 servers declared.

1. Added latency (issue 33: p50 <= 10 ms over the server's own time). The same call
   (mcp-server-time's get_current_time) alternately through a bare SDK session (the server's
   own time plus the SDK's and the pipe's) and through `McpServers.call` (its checks, the
   stream watch, the result bound), each on its own server process; the medians' difference
   is what Lancelot adds.
2. Start to ready (issue 33: unchanged with 10 servers): `lancelot run` to /health/ready
   answering ready, with no mcp.json and with 10 mcp-server-time servers declared, and, with
   them, the time until the log says the 10th is ready.

Run: .venv/bin/python benchmarks/mcp.py [--calls 300] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path[:] = [str(REPO), *(p for p in sys.path if Path(p or ".").resolve() != HERE)]

import uvloop  # noqa: E402
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

from core.mcp import McpLimits, McpServers, load_config  # noqa: E402
from core.receipts.redaction import Redactor  # noqa: E402
from core.runtime.tasks import Supervisor  # noqa: E402

TIME_SERVER = str(Path(sys.executable).with_name("mcp-server-time"))
ARGS = {"timezone": "UTC"}


async def bare_call(session: ClientSession) -> float:
    started = time.perf_counter()
    await session.call_tool("get_current_time", ARGS)
    return (time.perf_counter() - started) * 1000


async def lancelot_call(servers: McpServers) -> float:
    started = time.perf_counter()
    result = await servers.call("time", "get_current_time", ARGS)
    if not result.ok:
        raise SystemExit(f"call failed: {result.error}")
    return (time.perf_counter() - started) * 1000


async def added_latency(calls: int, tmp: Path) -> None:
    path = tmp / "mcp.json"
    path.write_text(json.dumps({"time": {"command": TIME_SERVER}}))
    tasks = Supervisor()
    params = StdioServerParameters(command=TIME_SERVER)
    async with (
        McpServers(load_config(path), Redactor(), tasks, McpLimits()) as servers,
        stdio_client(params) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        await servers.wait_for("time", lambda s: s.status == "ready", 60)
        for _ in range(20):  # warm both: first calls load time zone data
            await bare_call(session)
            await lancelot_call(servers)
        bare, ours = [], []
        for _ in range(calls):
            bare.append(await bare_call(session))
            ours.append(await lancelot_call(servers))
    await tasks.aclose()
    b, o = statistics.median(bare), statistics.median(ours)
    print(f"call p50 over {calls} calls: bare SDK {b:.2f} ms, through McpServers {o:.2f} ms, "
          f"added {o - b:.2f} ms (p90 added {pct(ours, 90) - pct(bare, 90):.2f} ms)")  # fmt: skip


def pct(values: list[float], p: int) -> float:
    return sorted(values)[min(len(values) - 1, len(values) * p // 100)]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def ready_lines(home: Path) -> int:
    log = home / "logs" / "lancelot.log"
    text = log.read_text(errors="replace") if log.exists() else ""
    return text.count("is ready with")


def start_to_ready(home: Path, servers: int) -> tuple[float, float | None]:
    """Seconds from `lancelot run` to ready, and to the last server ready (None: no servers)."""
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    declared = {f"time{n}": {"command": TIME_SERVER} for n in range(servers)}
    (home / "mcp.json").write_text(json.dumps({"mcpServers": declared}))
    port = free_port()
    env = {**os.environ, "LANCELOT_HOME": str(home), "LANCELOT_WEB_PORT": str(port),
           "LANCELOT_SANDBOX_WARM_AT_START": "false", "FEATURE_LOCAL_MODEL": "false"}  # fmt: skip
    started = time.perf_counter()
    proc = subprocess.Popen(
        [str(Path(sys.executable).with_name("lancelot")), "run"],
        stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=REPO,
    )  # fmt: skip
    try:
        ready = wait_until(lambda: is_ready(port), proc) - started
        if not servers:
            return ready, None
        return ready, wait_until(lambda: ready_lines(home) >= servers, proc) - started
    finally:
        proc.terminate()
        proc.wait(60)


def is_ready(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health/ready", timeout=1) as r:
            return bool(json.load(r)["ready"])
    except OSError:
        return False


def wait_until(done: Callable[[], bool], proc: subprocess.Popen[bytes]) -> float:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if done():
            return time.perf_counter()
        if proc.poll() is not None:
            raise SystemExit(f"lancelot exited with {proc.returncode}")
        time.sleep(0.005)
    raise SystemExit("not ready within 120 s")


def startup(runs: int, tmp: Path) -> None:
    for servers in (0, 10):
        results = [start_to_ready(tmp / f"home-{servers}-{n}", servers) for n in range(runs)]
        ready = statistics.median(r for r, _ in results)
        line = f"{servers:2d} servers: start -> ready median {ready:.2f} s over {runs} runs"
        if servers:
            line += f"; all {servers} servers ready after {statistics.median(a or 0 for _, a in results):.2f} s"
        print(line)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        uvloop.run(added_latency(args.calls, Path(tmp)))
        startup(args.runs, Path(tmp))


if __name__ == "__main__":
    main()
