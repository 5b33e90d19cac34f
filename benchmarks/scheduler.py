"""Scheduler jitter (actual fire time - scheduled time) while 100 messages a second arrive.

The real composition root with the real APScheduler timer: a probe job every 0.1 s goes
through the whole path (claim in scheduler.db, gates, run, receipt) while an owner's phone
sends 100 messages a second through the bus (each one: input gate, receipts, a reply card).
The same is measured idle for comparison.

Run: .venv/bin/python benchmarks/scheduler.py [--seconds 30] [--rate 100]
Target (issue 7): p99 <= 100 ms late under 100 messages/second.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

# Run as a script, this file's folder comes first on sys.path; the repository root is needed
# (bot, core, and the in-memory phone in tests.fakes).
HERE = Path(__file__).resolve().parent
sys.path[:] = [str(HERE.parent), *(p for p in sys.path if Path(p or ".").resolve() != HERE)]

from bot.app import Lancelot, assemble  # noqa: E402
from core.config import load_settings  # noqa: E402
from core.events import Inbound  # noqa: E402
from core.scheduler import JobContext  # noqa: E402
from tests.fakes.channel import MemoryChannel  # noqa: E402

JOBS = """timezone: UTC
jobs:
  probe:
    run: builtin:probe
    every_seconds: 0.1
    grace_seconds: 1
"""
TEXTS = ("hello there", "what is on today?", "/help", "/status")


STARTS: list[float] = []  # job code start - scheduled time, per run


async def _probe(ctx: JobContext) -> str:
    STARTS.append(time.time() - ctx.scheduled_for)
    return "ok"


async def _load(app: Lancelot, phone: MemoryChannel, rate: float, stop: asyncio.Event) -> int:
    """Publish `rate` messages a second on a fixed grid (no drift) until `stop`."""
    sent, start = 0, time.monotonic()
    while not stop.is_set():
        text = TEXTS[sent % len(TEXTS)]
        await app.bus.publish(Inbound(phone.name, "owner", "owner-chat", f"{text} #{sent}"))
        sent += 1
        delay = start + sent / rate - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
    return sent


def _summary(name: str, late: list[float], extra: str = "") -> str:
    ms = sorted(x * 1000 for x in late)
    p = lambda q: ms[min(len(ms) - 1, int(len(ms) * q))]  # noqa: E731
    return (
        f"{name}: {len(ms)} fires, late p50 {statistics.median(ms):.1f} ms, p95 {p(0.95):.1f} ms,"
        f" p99 {p(0.99):.1f} ms, max {ms[-1]:.1f} ms{extra}"
    )


async def measure(seconds: float, rate: float) -> tuple[list[float], list[float], int, int]:
    """Run for `seconds` with `rate` messages/second (0: idle); return the timer's lateness,
    the job code's start lateness, messages sent and replies delivered."""
    with tempfile.TemporaryDirectory() as tmp:
        jobs = Path(tmp) / "scheduler.yaml"
        jobs.write_text(JOBS)
        settings = load_settings(
            environ={
                "LANCELOT_HOME": str(Path(tmp) / "home"),
                "LANCELOT_SCHEDULER_JOBS_FILE": str(jobs),
                "LANCELOT_LIMITS_RATE_PER_MINUTE": "1000000",
                "LANCELOT_LOG_LEVEL": "WARNING",
            }
        )
        async with assemble(settings, web=False) as app:
            phone = MemoryChannel()
            await app.attach(phone)
            assert app.scheduler is not None
            app.scheduler.register("builtin:probe", _probe)
            app.health.mark_ready()
            await app.scheduler.started.wait()
            await asyncio.sleep(1.0)  # warm up
            app.scheduler.lateness.clear()
            STARTS.clear()
            stop = asyncio.Event()
            loader = asyncio.create_task(_load(app, phone, rate, stop)) if rate else None
            await asyncio.sleep(seconds)
            stop.set()
            sent = await loader if loader else 0
            late, starts = list(app.scheduler.lateness), list(STARTS)
            await app.drain()
            return late, starts, sent, len(phone.delivered)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--rate", type=float, default=100.0)
    args = parser.parse_args()
    expected = f" (expected {args.seconds * 10:.0f})"
    idle, idle_starts, _, _ = await measure(args.seconds, 0)
    print(_summary("idle, timer fire", idle, expected))
    print(_summary("idle, job start", idle_starts))
    loaded, starts, sent, replies = await measure(args.seconds, args.rate)
    load = f" ({sent / args.seconds:.0f} msg/s sent, {replies} replies)"
    print(_summary(f"{args.rate:.0f} msg/s, timer fire", loaded, expected + load))
    print(_summary(f"{args.rate:.0f} msg/s, job start", starts))
    ms = sorted(x * 1000 for x in loaded)
    p99 = ms[min(len(ms) - 1, int(len(ms) * 0.99))]
    print(f"target p99 <= 100 ms under load: {'met' if p99 <= 100 else 'NOT met'}")


if __name__ == "__main__":
    asyncio.run(main())
