"""/status latency while the agent is busy: requests waiting for approvals, and a model
call burning CPU in a thread (as llama-cpp does). Shows the agent never blocks the loop.

Run: .venv/bin/python benchmarks/agent_status.py [--waiting 5] [--samples 300]
Reference (issue 6): /status within 50 ms p99 while a model generates.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.app import assemble
from core.config import load_settings
from core.events import CardKind, Inbound
from core.llm.types import Completion, CompletionRequest
from tests.fakes.channel import MemoryChannel
from tests.fakes.scripted_model import ScriptedRouter, call

BLOCK = b"x" * (1 << 20)


def burn(seconds: float) -> None:
    """CPU-bound work in C that releases the GIL, as llama-cpp's inference does."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        hashlib.sha256(BLOCK).digest()


class ThinkingRouter(ScriptedRouter):
    """Each flagship call first generates for `think` seconds in a thread."""

    def __init__(self, think: float, *args: object, **kw: object) -> None:
        super().__init__(*args, **kw)  # type: ignore[arg-type]
        self._think = think

    async def complete(self, request: CompletionRequest, **kw: object) -> Completion:
        await asyncio.to_thread(burn, self._think)
        return await super().complete(request, **kw)  # type: ignore[arg-type]


def pct(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


async def measure(waiting: int, samples: int, think: float) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(
            environ={
                "LANCELOT_HOME": str(Path(tmp) / "home"),
                "LANCELOT_LIMITS_RATE_PER_MINUTE": "100000",  # measure latency, not the limiter
            }
        )
        script = [call("run_command", command=f"rm /workspace/f{n}.txt") for n in range(waiting)]
        # Requests that keep the model busy: each ls turn thinks first.
        script += [call("run_command", command="ls /workspace")] * 1000
        model = ThinkingRouter(think, script, local=None)
        async with assemble(settings, web=False, models=model) as app:
            phone = MemoryChannel()
            await app.attach(phone)
            for n in range(waiting):
                (app.home / "workspace" / f"f{n}.txt").write_text("x")
                await app.bus.publish(Inbound(phone.name, "owner", "owner-chat", f"delete f{n}"))
                _, card = await phone.next_card()
                assert card.kind is CardKind.APPROVAL
            await app.bus.publish(Inbound(phone.name, "owner", "owner-chat", "list my files"))
            latencies = []
            for _ in range(samples):
                started = time.perf_counter()
                await app.bus.publish(Inbound(phone.name, "owner", "owner-chat", "/status"))
                while True:
                    _, card = await phone.next_card()
                    if card.title == "Status":
                        break
                latencies.append((time.perf_counter() - started) * 1000)
            print(
                f"/status with {waiting} agent requests waiting for approval and a model "
                f"thinking in a thread: p50 {statistics.median(latencies):.2f} ms, "
                f"p99 {pct(latencies, 99):.2f} ms over {samples} (target p99 <= 50 ms)"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--waiting", type=int, default=5)
    parser.add_argument("--samples", type=int, default=300)
    parser.add_argument("--think", type=float, default=0.2, help="seconds per model call")
    args = parser.parse_args()
    asyncio.run(measure(args.waiting, args.samples, args.think))


if __name__ == "__main__":
    main()
