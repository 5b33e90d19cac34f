"""What a skill adds to a command: `/skills run command_runner {"command": "echo hi"}` beside
`/run echo hi`, end to end through the assembled app (bus, orchestrator, governance, SafeREPL),
alternating the two so both see the same machine load.

Run: PYTHONPATH=. .venv/bin/python benchmarks/skill_run.py [--runs 200]
No target is set by the issue; this reports the overhead (manifest check, content hash,
module load from cache, receipts).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from bot.app import assemble
from core.config import load_settings
from core.events import Inbound
from tests.fakes.channel import MemoryChannel

SKILL = '/skills run command_runner {"command": "echo hi"}'
DIRECT = "/run echo hi"


async def measure(runs: int) -> dict[str, list[float]]:
    with tempfile.TemporaryDirectory() as tmp:
        environ = {
            "LANCELOT_HOME": str(Path(tmp) / "home"),
            "LANCELOT_LIMITS_RATE_PER_MINUTE": "1000000",  # measure the work, not the limiter
        }
        settings = load_settings(environ=environ)
        async with assemble(settings, web=False) as app:
            phone = MemoryChannel()
            await app.attach(phone)
            times: dict[str, list[float]] = {SKILL: [], DIRECT: []}
            for i in range(runs + 10):
                for text in (SKILL, DIRECT) if i % 2 else (DIRECT, SKILL):
                    started = time.perf_counter()
                    await app.bus.publish(Inbound(phone.name, "owner", "owner-chat", text))
                    _, card = await phone.next_card()
                    elapsed = (time.perf_counter() - started) * 1000
                    assert "hi" in card.body, card
                    if i >= 10:  # warm-up runs are not counted
                        times[text].append(elapsed)
            return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    times = asyncio.run(measure(args.runs))
    for text, values in times.items():
        values.sort()
        p50 = statistics.median(values)
        p95 = values[int(len(values) * 0.95) - 1]
        print(f"{text:55s} p50 {p50:6.2f} ms  p95 {p95:6.2f} ms  (n={len(values)})")


if __name__ == "__main__":
    main()
