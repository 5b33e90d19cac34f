"""Memory under steady load: does `lancelot run` grow while the owner keeps talking (issue 36)?

`lancelot run` (a real process) against the fake Bot API and a fake OpenAI server, the owner
sending --rate messages a second for --minutes: plain text the agent answers with one model
call, `/status` and `/help` in turn, and every --run-every seconds a `/run rm -rf` of a folder
of its own whose approval card is answered (Approve or Deny; no kills, no outages). The
process's resident memory (VmRSS) is read every --sample seconds.

Reported: RSS at start, after --warm minutes and at the end; growth per hour after the warm-up
(a least-squares line through the samples, so one sample's noise does not decide it); the
messages sent and answered; the load average at both ends. Needs the Docker engine (`/run`).

With --trace, Lancelot runs in this process instead (the same settings, Telegram attached as
`lancelot run` does) under tracemalloc, and what grew between the end of the warm-up and the
end is printed by line, the fakes' own records left out: where the growth comes from.

Usage (from the repository root):

    python benchmarks/rss_soak.py                       # 20 minutes
    python benchmarks/rss_soak.py --minutes 120 --samples-to /tmp/rss.csv
    python benchmarks/rss_soak.py --minutes 20 --trace
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import logging
import os
import random
import sys
import tempfile
import time
import tracemalloc
from collections.abc import AsyncIterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
# benchmarks/telegram.py would shadow python-telegram-bot for the in-process run
sys.path[:] = [str(REPO), *(p for p in sys.path if Path(p or ".").resolve() != HERE)]
os.environ.setdefault("PTB_TIMEDELTA", "true")

from benchmarks.soak_presses import Presses  # noqa: E402
from tests.fakes.lancelot_process import lancelot_run, run_env, stop  # noqa: E402
from tests.fakes.llm import FakeOpenAI, Reply  # noqa: E402
from tests.fakes.telegram import FakeTelegram  # noqa: E402

OWNER = 1001
TRACE_FRAMES = 16  # deep enough to reach the house from a library's allocation
TEXTS = ("what is on my list today", "/status", "remind me what we said about the garden", "/help")


def rss_mb(pid: int) -> float:
    """The process's resident set size in MB (VmRSS)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for {pid}")


def slope_per_hour(samples: list[tuple[float, float]]) -> float:
    """MB an hour: the least-squares line through (seconds, MB)."""
    if len(samples) < 2:
        return float("nan")
    n = len(samples)
    mean_t = sum(t for t, _ in samples) / n
    mean_m = sum(m for _, m in samples) / n
    spread = sum((t - mean_t) ** 2 for t, _ in samples)
    if spread == 0:
        return float("nan")
    rise = sum((t - mean_t) * (m - mean_m) for t, m in samples)
    return rise / spread * 3600


async def kill_not_expected() -> None:
    raise AssertionError("the steady soak kills nothing")


def settings_env(home: Path, tg: FakeTelegram, model: FakeOpenAI) -> dict[str, str]:
    """The soak's settings: the shipped ones, the fakes' addresses, no owner rate limit."""
    return run_env(
        home,
        tg,
        owner=OWNER,
        LANCELOT_LIMITS_RATE_PER_MINUTE="100000",
        FEATURE_LOCAL_MODEL="false",
        OPENAI_API_KEY="sk-bench-not-real",
        OPENAI_BASE_URL=model.base_url,
    )


@contextlib.asynccontextmanager
async def subprocess_lancelot(env: dict[str, str], home: Path) -> AsyncIterator[int]:
    """`lancelot run` as a process of its own; yields its pid."""
    proc = await lancelot_run(env, stderr=(home.parent / "stderr.log").open("ab"))
    try:
        yield proc.pid
    finally:
        await stop(proc)


@contextlib.asynccontextmanager
async def traced_lancelot(env: dict[str, str], home: Path) -> AsyncIterator[int]:
    """Lancelot in this process, as `lancelot run` wires it; yields this process's pid."""
    from bot.app import assemble
    from bot.channels.telegram.application import TelegramTuning
    from bot.channels.telegram.setup import attach_telegram
    from bot.pairing import OwnerBook
    from core.config import load_settings

    os.environ.update(env)  # the feature switches are read from the environment, as in a run
    settings = load_settings(environ=env)
    async with assemble(settings) as app:
        await attach_telegram(
            app,
            tuning=TelegramTuning(poll_timeout=10, verify_tls=False),
            owners=OwnerBook(app.settings, app.home, channels=list(app.channels)),
        )
        yield os.getpid()


class Growth:
    """tracemalloc snapshots at the end of the warm-up and at the end; what grew between."""

    def __init__(self, collect: bool) -> None:
        self.warm: tracemalloc.Snapshot | None = None
        self.collect = collect  # a full garbage collection before each snapshot
        self.traced_at_warm = 0

    def _snapshot(self) -> tracemalloc.Snapshot:
        if self.collect:
            gc.collect()
        return tracemalloc.take_snapshot()

    def mark_warm(self) -> None:
        self.warm = self._snapshot()
        self.traced_at_warm = tracemalloc.get_traced_memory()[0]

    def report(self, top: int = 20) -> None:
        if self.warm is None:
            print("the soak ended before its warm-up did: nothing to compare")
            return
        end = self._snapshot()
        traced = tracemalloc.get_traced_memory()[0]
        print(f"traced Python memory: {self.traced_at_warm / 2**20:.1f} MB at the warm-up's end, "
              f"{traced / 2**20:.1f} MB at the end"
              f"{' (each after a full garbage collection)' if self.collect else ''}")  # fmt: skip
        grown = [s for s in end.compare_to(self.warm, "traceback") if not _the_fakes(s.traceback)]
        grown.sort(key=lambda s: s.size_diff, reverse=True)
        print("grew most between the warm-up and the end, by the allocating call in the house:")
        for stat in grown[:top]:
            print(f"  {stat.size_diff / 1024:+9.1f} KiB {stat.count_diff:+7d} blocks  "
                  f"{_in_the_house(stat.traceback)}")  # fmt: skip


def _the_fakes(traceback: tracemalloc.Traceback) -> bool:
    """Whether the fakes or this script made the allocation (their records are not Lancelot's)."""
    return any(f.filename.startswith((f"{REPO}/tests/", f"{HERE}/")) for f in traceback)


def _in_the_house(traceback: tracemalloc.Traceback) -> str:
    """The innermost frame in Lancelot's own code (else the innermost), and the allocating one."""
    ours = [
        f for f in traceback if f.filename.startswith(str(REPO)) and "/.venv/" not in f.filename
    ]
    where = ours[-1] if ours else traceback[-1]
    at = traceback[-1]
    return f"{Path(where.filename).relative_to(REPO) if ours else where.filename}:{where.lineno} (allocated at {Path(at.filename).name}:{at.lineno})"


async def soak(args: argparse.Namespace) -> None:
    rng = random.Random(args.seed)
    home = Path(tempfile.mkdtemp(prefix="lancelot-rss-")) / "home"
    samples: list[tuple[float, float]] = []
    growth = Growth(args.collect)
    if args.trace:
        tracemalloc.start(TRACE_FRAMES)
    async with FakeTelegram() as tg, FakeOpenAI() as model:
        model.default = Reply(text=json.dumps({"response_to_user": "fake answer"}))
        env = settings_env(home, tg, model)
        lancelot = traced_lancelot if args.trace else subprocess_lancelot
        presses = Presses(tg, home, rng, kill_not_expected, 0.0)
        async with lancelot(env, home) as pid:
            await tg.wait_for(lambda: tg.is_polling, timeout=120)
            started = time.monotonic()
            samples.append((0.0, rss_mb(pid)))
            sent = asked = 0
            next_sample, next_run = args.sample, args.run_every
            while (elapsed := time.monotonic() - started) < args.minutes * 60:
                if elapsed >= next_sample:
                    samples.append((elapsed, rss_mb(pid)))
                    if args.samples_to:
                        write_samples(args.samples_to, samples)
                    next_sample += args.sample
                if growth.warm is None and args.trace and elapsed >= args.warm * 60:
                    growth.mark_warm()
                if args.run_every and elapsed >= next_run:
                    presses.ask(asked)
                    asked += 1
                    next_run += args.run_every
                tg.user_message(f"{TEXTS[sent % len(TEXTS)]} #{sent}", user_id=OWNER)
                sent += 1
                await asyncio.sleep(rng.expovariate(args.rate))
            samples.append((time.monotonic() - started, rss_mb(pid)))
            if args.trace:
                growth.report()
            with contextlib.suppress(TimeoutError):
                await presses.finish()
            answered = sum(1 for s in tg.sent if s.get("chat_id") == OWNER)
    report(args, samples, sent, asked, answered)


def write_samples(path: Path, samples: list[tuple[float, float]]) -> None:
    path.write_text("seconds,rss_mb\n" + "".join(f"{t:.0f},{m:.1f}\n" for t, m in samples))


def report(
    args: argparse.Namespace,
    samples: list[tuple[float, float]],
    sent: int,
    asked: int,
    answered: int,
) -> None:
    warm = args.warm * 60
    after = [(t, m) for t, m in samples if t >= warm]
    at_warm = after[0][1] if after else float("nan")
    print(f"{sent} owner messages over {args.minutes:.0f} min at ~{args.rate}/s "
          f"({asked} /run commands with cards answered); {answered} messages sent to the owner")  # fmt: skip
    print(f"RSS: start {samples[0][1]:.1f} MB, at {args.warm:g} min {at_warm:.1f} MB, "
          f"end {samples[-1][1]:.1f} MB, peak {max(m for _, m in samples):.1f} MB")  # fmt: skip
    print(f"growth after the first {args.warm:g} min: {slope_per_hour(after):+.1f} MB an hour "
          f"(least squares over {len(after)} samples)")  # fmt: skip


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=20.0)
    parser.add_argument("--rate", type=float, default=3.0, help="owner messages a second")
    parser.add_argument("--run-every", type=float, default=20.0,
                        help="seconds between /run commands whose cards are answered (0: none)")  # fmt: skip
    parser.add_argument("--sample", type=float, default=30.0, help="seconds between RSS reads")
    parser.add_argument("--warm", type=float, default=10.0, help="minutes not counted in growth")
    parser.add_argument("--samples-to", type=Path, default=None, help="write the samples as CSV")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--trace", action="store_true",
                        help="run Lancelot in this process under tracemalloc; print what grew")  # fmt: skip
    parser.add_argument("--collect", action="store_true",
                        help="with --trace: a full garbage collection before each snapshot")  # fmt: skip
    args = parser.parse_args()
    logging.getLogger("telegram").setLevel(logging.CRITICAL)
    print(f"load average {os.getloadavg()}")
    await soak(args)
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    asyncio.run(main())
