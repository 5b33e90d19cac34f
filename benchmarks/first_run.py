"""From a clone to a paired Telegram owner answered by the bot (issue 19, the first figure).

Runs the steps of docs/walkthrough.md that involve the machine, against the fake Bot API:
`lancelot run` as a real process with only TELEGRAM_BOT_TOKEN (pointed at the fake through
TELEGRAM_API_BASE_URL), the pairing code read from its console, then a user who taps Start,
sends the code and sends /status. Reported per round and as the median: process start to the
code on the console, Start to the "send me the code" answer, the code to the greeting and to
onboarding's first question, /status to its answer, and the machine's total. With --install,
also a fresh virtualenv and `pip install -e .` (warm pip cache: a lower bound).

Usage (from the repository root):

    python benchmarks/first_run.py
    python benchmarks/first_run.py --rounds 5 --install
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path[:] = [str(REPO), *(p for p in sys.path if Path(p or ".").resolve() != HERE)]
os.environ.setdefault("PTB_TIMEDELTA", "true")

from tests.fakes.lancelot_process import lancelot_run, pairing_code, run_env  # noqa: E402
from tests.fakes.telegram import FakeTelegram  # noqa: E402

STEPS = ("code shown", "Start answered", "greeted", "first question", "/status answered")


async def run_lancelot(tg: FakeTelegram, home: Path) -> asyncio.subprocess.Process:
    """`lancelot run` as the walk-through starts it: a token and nothing else."""
    return await lancelot_run(run_env(home, tg), stdout=asyncio.subprocess.PIPE)


async def reply_to(tg: FakeTelegram, text: str, replies: int = 1) -> float:
    """Send `text` as the user; seconds until the bot has sent `replies` more messages."""
    before = len(tg.sent)
    start = time.perf_counter()
    tg.user_message(text)
    await tg.wait_for_sent(before + replies, timeout=60)
    return time.perf_counter() - start


async def one_round(show: bool = False) -> dict[str, float]:
    timings: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="lancelot-first-run-") as tmp:
        async with FakeTelegram() as tg:
            start = time.perf_counter()
            process = await run_lancelot(tg, Path(tmp) / "home")
            try:
                assert process.stdout is not None
                code = await asyncio.wait_for(pairing_code(process.stdout), 120)
                timings["code shown"] = time.perf_counter() - start
                await tg.wait_for(lambda: tg.is_polling, timeout=60)
                timings["Start answered"] = await reply_to(tg, "/start")
                sent = time.perf_counter()
                timings["greeted"] = await reply_to(tg, code.lower())  # as typed on a phone
                await tg.wait_for_sent(len(tg.sent) + 1, timeout=60)
                timings["first question"] = time.perf_counter() - sent
                timings["/status answered"] = await reply_to(tg, "/status")
                assert "paired on" in tg.sent[-1]["plain_text"], tg.sent[-1]["plain_text"]
                if show:
                    print(f"console: Pairing code for Telegram: {code} ...")
                    for message in tg.sent:
                        print("--- bot:", message["plain_text"], sep="\n")
            finally:
                process.send_signal(signal.SIGTERM)
                await asyncio.wait_for(process.wait(), 60)
    timings["machine total"] = sum(
        timings[s] for s in ("code shown", "Start answered", "first question", "/status answered")
    )
    return timings


def timed_install() -> float:
    """A fresh virtualenv and `pip install -e .` (pip's cache as it is here)."""
    import subprocess

    with tempfile.TemporaryDirectory(prefix="lancelot-venv-") as tmp:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "venv", tmp], check=True)
        pip = Path(tmp) / "bin" / "pip"
        subprocess.run([str(pip), "install", "-q", "-e", str(REPO)], check=True)
        return time.perf_counter() - start


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--install", action="store_true", help="also time pip install -e .")
    parser.add_argument("--show", action="store_true", help="print what the user sees once")
    args = parser.parse_args()
    rounds = [await one_round(args.show and i == 0) for i in range(args.rounds)]
    print(f"{'step':<20}" + "".join(f"{'round ' + str(i + 1):>10}" for i in range(len(rounds))))
    for step in (*STEPS, "machine total"):
        cells = "".join(f"{r[step]:>9.2f}s" for r in rounds)
        print(f"{step:<20}{cells}   median {statistics.median(r[step] for r in rounds):.2f}s")
    if args.install:
        print(f"{'pip install -e .':<20}{timed_install():>9.1f}s (fresh venv, warm pip cache)")


if __name__ == "__main__":
    asyncio.run(main())
