"""Shell effects (issue 15): dry runs in an overlay of the workspace, apply and undo.

Measures, through core.tools.effects.ShellEffects against the real Docker engine:
- a read-only command (`ls`): dry run, empty effect set (target p50 <= 150 ms);
- `echo hi > a.txt`: dry run + effect set + apply + receipt form (target p50 <= 300 ms);
- the effect computation on a 10,000-file, 500 MB workspace (cost follows the upper layer:
  compared with one walk of the workspace);
- undo of a 100-file change (target p50 <= 200 ms).

Run: .venv/bin/python benchmarks/shell_effects.py [--runs 30] [--pause 0.5] [--big-mb 500]
`--pause` is the time between commands (a phone user's pace; 0 for back to back: then the
pool of ready containers runs dry and the figures show container start-up).
Needs a Docker engine and the image (`lancelot sandbox build`).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:] = [str(HERE.parent), *(p for p in sys.path if Path(p or ".").resolve() != HERE)]

from core.tools.action import ToolAction  # noqa: E402
from core.tools.capability import CapabilityTokens  # noqa: E402
from core.tools.effects import DryRun, EffectSettings, ShellEffects  # noqa: E402
from core.tools.effects.scan import scan_upper  # noqa: E402
from core.tools.sandbox import DockerEngine, SandboxLimits  # noqa: E402
from core.tools.sandbox.limits import command_user  # noqa: E402
from core.tools.workspace import Workspace  # noqa: E402

CAPS = CapabilityTokens(b"benchmark")


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


def report(name: str, values: list[float]) -> None:
    print(
        f"{name}: n={len(values)} p50 {statistics.median(values):.1f} ms, "
        f"p95 {percentile(values, 0.95):.1f} ms, min {min(values):.1f} ms, "
        f"max {max(values):.1f} ms",
        flush=True,
    )


def hand_over(root: Path) -> None:
    if os.geteuid() != 0:
        return
    uid = command_user()
    for top, _dirs, files in os.walk(root):
        os.chown(top, uid, uid)
        for name in files:
            os.chown(os.path.join(top, name), uid, uid)


async def dry(engine: ShellEffects, command: str) -> DryRun:
    action = ToolAction("shell.exec", command)
    return await engine.dry_run(action, CAPS.issue(action.digest))


async def timed(
    runs: int, pause: float, step: Callable[[], Awaitable[float | None]]
) -> list[float]:
    values = []
    for _ in range(runs):
        await asyncio.sleep(pause)
        value = await step()
        if value is not None:
            values.append(value)
    return values


async def read_only(engine: ShellEffects, runs: int, pause: float) -> list[float]:
    async def step() -> float:
        started = time.perf_counter()
        run = await dry(engine, "ls")
        elapsed = (time.perf_counter() - started) * 1000
        assert run.result.exit_code == 0, run
        assert run.effects.empty, run
        return elapsed

    return await timed(runs, pause, step)


async def write_and_apply(engine: ShellEffects, root: Path, runs: int, pause: float) -> list[float]:
    async def step() -> float:
        (root / "a.txt").unlink(missing_ok=True)
        started = time.perf_counter()
        run = await dry(engine, "echo hi > a.txt")
        change = await engine.apply(run.id, run.effects.digest)
        json.dumps({"dry_run": run.effects.for_receipt(), "change": change.id})
        elapsed = (time.perf_counter() - started) * 1000
        assert (root / "a.txt").read_text() == "hi\n"
        return elapsed

    return await timed(runs, pause, step)


async def undo_hundred(engine: ShellEffects, root: Path, runs: int, pause: float) -> list[float]:
    folder = root / "hundred"
    folder.mkdir(exist_ok=True)
    for n in range(100):
        (folder / f"f{n:03}").write_text(f"original {n}\n" * 20)
    hand_over(root)

    async def step() -> float:
        run = await dry(engine, "for f in hundred/*; do echo changed > $f; done")
        assert len(run.effects.effects) == 100, run.effects.summary
        change = await engine.apply(run.id, run.effects.digest)
        started = time.perf_counter()
        await engine.undo(change.id)
        elapsed = (time.perf_counter() - started) * 1000
        assert (folder / "f007").read_text().startswith("original 7")
        return elapsed

    return await timed(runs, pause, step)


def fill(root: Path, files: int, total_mb: int) -> None:
    size = total_mb * (1 << 20) // files
    block = os.urandom(size)
    for n in range(files):
        folder = root / "big" / f"d{n // 100:03}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"f{n:05}.bin").write_bytes(block[n % 97 :] + block[: n % 97])
    hand_over(root)


def walk_all(root: Path, hashing: bool) -> int:
    """What a diff of the whole workspace would cost: one walk (and hashing every file)."""
    count = 0
    for top, _dirs, files in os.walk(root):
        count += len(files)
        if hashing:
            for name in files:
                hashlib.sha256(Path(top, name).read_bytes()).hexdigest()
    return count


async def big_workspace(home: Path, runs: int, pause: float, total_mb: int) -> None:
    workspace = Workspace(home / "workspace")
    started = time.perf_counter()
    fill(workspace.root, 10_000, total_mb)
    print(
        f"(built a 10,000-file, {total_mb} MB workspace in {time.perf_counter() - started:.1f} s)"
    )
    for hashing in (False, True):
        started = time.perf_counter()
        walk_all(workspace.root, hashing)
        what = "hashing every file" if hashing else "names only"
        elapsed = (time.perf_counter() - started) * 1000
        print(f"for scale, one walk of that workspace ({what}): {elapsed:.1f} ms")
    limits = SandboxLimits(timeout_seconds=30)
    settings = EffectSettings(pool_size=2)
    async with ShellEffects(DockerEngine(), workspace, home, CAPS, limits, settings) as engine:
        await engine.warm()
        await asyncio.sleep(2)
        command = "echo hi > a.txt && echo more >> big/d050/f05000.bin && rm big/d099/f09999.bin"
        scans: list[float] = []
        totals: list[float] = []
        for _ in range(runs):
            await asyncio.sleep(pause)
            started = time.perf_counter()
            run = await dry(engine, command)
            totals.append((time.perf_counter() - started) * 1000)
            assert len(run.effects.effects) == 3, run.effects.summary
            upper = home / "dryruns" / run.id / "upper"
            started = time.perf_counter()
            scan_upper(upper, workspace.root, engine.pool.factory.opaque_xattr)
            scans.append((time.perf_counter() - started) * 1000)
            await engine.discard(run.id)
        report(f"10k/{total_mb} MB workspace, effect computation (scan of the upper layer)", scans)
        report(f"10k/{total_mb} MB workspace, whole dry run", totals)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--pause", type=float, default=0.5)
    parser.add_argument("--big-mb", type=int, default=500)
    parser.add_argument("--pool", type=int, default=2)
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()}")
    with tempfile.TemporaryDirectory(prefix="effects-bench-") as tmp:
        home = Path(tmp) / "home"
        workspace = Workspace(home / "workspace")
        (workspace.root / "notes.md").write_text("notes\n")
        hand_over(workspace.root)
        limits = SandboxLimits(timeout_seconds=30)
        settings = EffectSettings(pool_size=args.pool)
        async with ShellEffects(DockerEngine(), workspace, home, CAPS, limits, settings) as engine:
            await engine.warm()
            await asyncio.sleep(2)
            await read_only(engine, 3, args.pause)  # every path warm before timing
            report(
                "read-only `ls` (dry run, no effects)",
                await read_only(engine, args.runs, args.pause),
            )
            report(
                "`echo hi > a.txt` dry run + effects + apply + receipt form",
                await write_and_apply(engine, workspace.root, args.runs, args.pause),
            )
            report(
                "undo of a 100-file change",
                await undo_hundred(engine, workspace.root, args.runs, args.pause),
            )
    with tempfile.TemporaryDirectory(prefix="effects-bench-big-") as tmp:
        await big_workspace(Path(tmp) / "home", min(args.runs, 10), args.pause, args.big_mb)
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    asyncio.run(main())
