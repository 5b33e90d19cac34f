"""`/run echo hi` end to end through governance and the warm Docker sandbox, beside a cold
`docker run --rm <image> echo hi` measured in the same run.

Run: .venv/bin/python benchmarks/sandbox.py [--runs 50] [--cold 10]
Target (issue 5): warm p50 <= 150 ms. Needs a Docker engine and the image
(`lancelot sandbox build`).
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:] = [str(HERE.parent), *(p for p in sys.path if Path(p or ".").resolve() != HERE)]

from bot.app import Lancelot, assemble  # noqa: E402
from core.config import load_settings  # noqa: E402
from core.events import Inbound  # noqa: E402
from tests.fakes.channel import MemoryChannel  # noqa: E402


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


def report(name: str, values: list[float]) -> None:
    print(
        f"{name}: n={len(values)} p50 {statistics.median(values):.1f} ms, "
        f"p95 {percentile(values, 0.95):.1f} ms, min {min(values):.1f} ms, "
        f"max {max(values):.1f} ms"
    )


async def one_run(app: Lancelot, phone: MemoryChannel, text: str) -> tuple[float, str]:
    started = time.perf_counter()
    await app.bus.publish(Inbound(phone.name, "owner", "owner-chat", text))
    _, card = await phone.next_card(wait=30)
    return (time.perf_counter() - started) * 1000, card.body


async def warm_runs(home: Path, runs: int) -> list[float]:
    settings = load_settings(
        environ={"LANCELOT_HOME": str(home), "LANCELOT_LIMITS_RATE_PER_MINUTE": "100000"}
    )
    async with assemble(settings, web=False) as app:
        phone = MemoryChannel()
        await app.attach(phone)
        for _ in range(5):  # the pool fills and every path is warm before timing
            _, body = await one_run(app, phone, "/run echo hi")
            if "exit 0\nhi" not in body:
                raise SystemExit(f"the sandbox did not answer: {body!r}")
        timings = []
        for _ in range(runs):
            elapsed, body = await one_run(app, phone, "/run echo hi")
            assert "exit 0\nhi" in body, body
            timings.append(elapsed)
        return timings


def cold_runs(image: str, runs: int) -> list[float]:
    docker = shutil.which("docker")
    if docker is None:
        raise SystemExit("the docker command line is needed for the cold runs")
    timings = []
    for _ in range(runs):
        started = time.perf_counter()
        done = subprocess.run(
            [docker, "run", "--rm", image, "echo", "hi"], capture_output=True, text=True
        )
        timings.append((time.perf_counter() - started) * 1000)
        assert done.stdout == "hi\n", done.stderr
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--cold", type=int, default=10)
    args = parser.parse_args()
    image = load_settings(environ={}).sandbox.image
    with tempfile.TemporaryDirectory() as tmp:
        warm = asyncio.run(warm_runs(Path(tmp) / "home", args.runs))
    cold = cold_runs(image, args.cold)
    report("warm: /run echo hi through governance + sandbox", warm)
    report(f"cold: docker run --rm {image} echo hi", cold)
    verdict = "meets" if statistics.median(warm) <= 150 else "MISSES"
    print(f"target p50 <= 150 ms: {verdict}")


if __name__ == "__main__":
    main()
