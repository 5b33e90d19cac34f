"""Policy decision latency for a T0 action (cached) and an uncached T3 classification.

Run: .venv/bin/python benchmarks/policy.py
Target (issue 4): T0 decision p50 <= 50 microseconds (cached).
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from core.governance.policy import PolicyEngine
from core.tools.action import ToolAction
from core.tools.capability import CapabilityTokens
from soul import SHIPPED_VERSIONS_DIR, SoulStore


def timings(engine: PolicyEngine, action: ToolAction, count: int) -> list[float]:
    out = []
    for _ in range(count):
        started = time.perf_counter()
        engine.decide(action)
        out.append((time.perf_counter() - started) * 1e6)
    return sorted(out)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        soul = SoulStore(SHIPPED_VERSIONS_DIR, Path(tmp)).load_active()
    engine = PolicyEngine(lambda: soul, CapabilityTokens(b"x" * 32))
    t0 = timings(engine, ToolAction("shell.exec", "ls -la /workspace"), 20_000)
    uncached = PolicyEngine(lambda: soul, CapabilityTokens(b"x" * 32))
    t3 = timings(uncached, ToolAction("shell.exec", "rm -rf /workspace/old"), 2_000)
    for name, values in (("T0 cached (ls -la)", t0), ("T3 uncached (rm -rf)", t3)):
        p99 = values[int(len(values) * 0.99)]
        print(f"{name}: p50 {statistics.median(values):.1f} us, p99 {p99:.1f} us")


if __name__ == "__main__":
    main()
