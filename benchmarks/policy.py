"""Policy decision latency for a T0 action the Soul has ruled on before (cached), and for
T3 commands it has not seen (each a new command: the Soul's ruling is made every time).

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


def timings(engine: PolicyEngine, actions: list[ToolAction]) -> list[float]:
    out = []
    for action in actions:
        started = time.perf_counter()
        engine.decide(action)
        out.append((time.perf_counter() - started) * 1e6)
    return sorted(out)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        soul = SoulStore(SHIPPED_VERSIONS_DIR, Path(tmp)).load_active()
    engine = PolicyEngine(lambda: soul, CapabilityTokens(b"x" * 32))
    t0 = timings(engine, [ToolAction("shell.exec", "ls -la /workspace")] * 20_000)
    uncached = PolicyEngine(lambda: soul, CapabilityTokens(b"x" * 32))
    new = [ToolAction("shell.exec", f"rm -rf /workspace/old{i}") for i in range(2_000)]
    t3 = timings(uncached, new)
    for name, values in (("T0 cached (ls -la)", t0), ("T3 uncached (rm -rf)", t3)):
        p99 = values[int(len(values) * 0.99)]
        print(f"{name}: p50 {statistics.median(values):.1f} us, p99 {p99:.1f} us")


if __name__ == "__main__":
    main()
