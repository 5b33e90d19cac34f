"""What the flow rules add to one tool call: the outbound secret scan of its arguments, the
judgement against the request's labels, and noting the labels of what it returned; and what
the encoded-secret masking adds to a prompt. Shapes users produce: a request that has read a
4 KB page, a workspace file and memory, then calls web_fetch, write_file, run_command or
remember; prompts of 4 KB and 32 KB of tool output (a page, a base64 blob).

Run: .venv/bin/python benchmarks/flow.py [--calls 20000]
Reference (issue 30): p50 <= 1 ms per tool call.
"""

from __future__ import annotations

import argparse
import base64
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.agent.catalog import built_in_tools
from core.agent.flow_checks import FlowChecks
from core.governance.flow import RequestFlow
from core.llm.redaction import PiiRedactor
from core.receipts.redaction import Redactor
from core.tools.action import ToolAction

TOOLS = built_in_tools()
PAGE = ("Tomatoes like warm soil. See https://garden.example/tomatoes/blight for more. " * 55)[
    :4096
]
OWNER = "summarise https://garden.example/news and save the gist to notes/garden.md"
CALLS = {
    "web_fetch": ToolAction("web.fetch", None, {"url": "https://garden.example/tomatoes/blight"}),
    "write_file": ToolAction(
        "file.write", None, {"path": "/workspace/notes/garden.md", "content": PAGE[:800]}
    ),
    "run_command": ToolAction("shell.exec", "ls -la notes", {}),
    "remember": ToolAction("memory.remember", None, {"text": "the owner grows tomatoes"}),
}


def a_request() -> RequestFlow:
    """A request that has read memory, a workspace file and a page."""
    flow = RequestFlow(OWNER)
    flow.knows_private("memory")
    read = ToolAction("file.read", None, {"path": "/workspace/notes/todo.txt"})
    flow.observe(read, TOOLS.flow_of(read.capability), PAGE[:600])
    fetch = ToolAction("web.fetch", None, {"url": "https://garden.example/news"})
    flow.observe(fetch, TOOLS.flow_of(fetch.capability), PAGE)
    return flow


def per_call(checks: FlowChecks, action: ToolAction, calls: int) -> list[float]:
    """Microseconds for the whole flow work of one call, `calls` times."""
    timings = []
    for _ in range(calls):
        flow = a_request()
        started = time.perf_counter()
        spec = TOOLS.flow_of(action.capability)
        checks.carries_secret(spec, dict(action.params))
        checks.judge(action, spec, flow)
        flow.observe(action, spec, PAGE)
        timings.append((time.perf_counter() - started) * 1e6)
    return timings


def masking(size: int, rounds: int, *, blob: bool) -> list[float]:
    """Microseconds to mask a prompt of `size` bytes of tool output, prose (or half prose,
    half a base64 blob); fresh text each round, as remembered masks would otherwise answer."""
    prose = (PAGE * (size // len(PAGE) + 1))[:size]
    encoded = base64.b64encode(bytes(range(256)) * (size // 512)).decode()[: size // 2]
    timings = []
    for n in range(rounds):
        redactor = PiiRedactor(Redactor())
        text = f"{n} {prose[: size // 2]} {encoded}" if blob else f"{n} {prose}"
        started = time.perf_counter()
        redactor.text(text)
        timings.append((time.perf_counter() - started) * 1e6)
    return timings


def show(name: str, timings: list[float]) -> None:
    ordered = sorted(timings)
    p99 = ordered[int(len(ordered) * 0.99) - 1]
    print(f"{name:<34} p50 {statistics.median(ordered):8.1f} µs   p99 {p99:8.1f} µs")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=20000)
    args = parser.parse_args()
    checks = FlowChecks()
    for name, action in CALLS.items():
        show(f"flow work of one {name}", per_call(checks, action, args.calls))
    for size in (4096, 32768):
        show(f"prompt masking, {size // 1024} KB of prose", masking(size, 300, blob=False))
        show(f"prompt masking, {size // 1024} KB, half base64", masking(size, 300, blob=True))


if __name__ == "__main__":
    main()
