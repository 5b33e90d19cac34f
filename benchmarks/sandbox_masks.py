"""What masking sensitive files adds to a sandboxed run: the workspace scan before every
command (the mounts are made with the container, off the warm path), and `echo hi` through
the warm DockerSandbox with secrets in the workspace.

Run: .venv/bin/python benchmarks/sandbox_masks.py [--runs 50] [--files 1000 10000]
Needs a Docker engine and the sandbox image (`lancelot sandbox build`).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:] = [str(HERE.parent), *(p for p in sys.path if Path(p or ".").resolve() != HERE)]

from core.tools.action import ToolAction  # noqa: E402
from core.tools.capability import CapabilityTokens  # noqa: E402
from core.tools.sandbox import DockerEngine, DockerSandbox, SandboxLimits  # noqa: E402
from core.tools.sandbox.masks import find_sensitive  # noqa: E402
from core.tools.workspace import Workspace  # noqa: E402


def fill(root: Path, files: int) -> None:
    """`files` ordinary files in folders of 100, a .env, a repository's config, a key."""
    for n in range(files):
        folder = root / f"d{n // 100}"
        folder.mkdir(exist_ok=True)
        (folder / f"f{n}.txt").write_text("x")
    (root / ".env").write_text("API_KEY=sk-test-NOT-A-REAL-KEY-0000\n")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]\n")
    (root / "keys").mkdir()
    (root / "keys" / "server.key").write_text("k")


def scan_ms(root: Path, runs: int) -> float:
    took = []
    for _ in range(runs):
        started = time.perf_counter()
        find_sensitive(root)
        took.append((time.perf_counter() - started) * 1000)
    return statistics.median(took)


async def run_ms(root: Path, runs: int) -> float:
    caps = CapabilityTokens(b"bench")
    limits = SandboxLimits(image="lancelot-sandbox:latest", pool_size=2)
    took = []
    async with DockerSandbox(DockerEngine(), Workspace(root), caps, limits) as box:
        action = ToolAction("shell.exec", "echo hi")
        await box.run(action, caps.issue(action.digest))  # warm
        for _ in range(runs):
            started = time.perf_counter()
            await box.run(action, caps.issue(action.digest))
            took.append((time.perf_counter() - started) * 1000)
    return statistics.median(took)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--files", type=int, nargs="+", default=[1000, 10000])
    args = parser.parse_args()
    for files in args.files:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "workspace"
            root.mkdir()
            fill(root, files)
            scan = scan_ms(root, args.runs)
            run = asyncio.run(run_ms(root, args.runs))
            print(f"{files} files: scan p50 {scan:.2f} ms; warm `echo hi` p50 {run:.1f} ms")


if __name__ == "__main__":
    main()
