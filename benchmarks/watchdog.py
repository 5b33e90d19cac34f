"""How long after a kill -9 of `lancelot run` the owner hears of it from `lancelot watchdog`
(issue 31, item 5: within 2 minutes), with the shipped settings: a beat every 5 s, 60 s of
silence allowed, the heartbeat read every 5 s.

Both are real processes against the fake Bot API. Each run starts Lancelot, waits a random
0-10 s after its first beat (a kill lands anywhere between two beats and two reads), kills
its process group with SIGKILL, and times the "not answering" message in the owner's chat;
then starts Lancelot again and times the "back" message from its first beat.

Usage (from the repository root):

    python benchmarks/watchdog.py --runs 3
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path[:] = [str(REPO), *(p for p in sys.path if Path(p or ".").resolve() != HERE)]

from bot.watchdog.message import BACK_MARK, DOWN_MARK  # noqa: E402
from tests.bot.watchdog.test_watchdog_process import OWNER, beating, told, watchdog  # noqa: E402
from tests.fakes.lancelot_process import lancelot_run, run_env  # noqa: E402
from tests.fakes.processes import kill_group, reap  # noqa: E402

Process = asyncio.subprocess.Process
from tests.fakes.telegram import FakeTelegram  # noqa: E402

ENV = {"LANCELOT_SANDBOX_WARM_AT_START": "false", "FEATURE_LOCAL_MODEL": "false"}
LIMIT = 180.0


async def outage(tg: FakeTelegram, process: Process, run: int) -> float:
    """Kill -9 `process` a random 0-10 s from now; seconds until the owner is told."""
    await asyncio.sleep(random.uniform(0, 10))
    kill_group(process)
    killed = time.monotonic()
    await tg.wait_for(lambda: len(told(tg, DOWN_MARK)) == run, timeout=LIMIT)
    return time.monotonic() - killed


async def main(runs: int) -> None:
    """`runs` kills and restarts under one watchdog, in one home."""
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        async with FakeTelegram() as tg:
            env = run_env(home, tg, owner=OWNER, **ENV)
            process = await lancelot_run(env)
            pid = await beating(home)
            async with watchdog(env):
                for run in range(1, runs + 1):
                    try:
                        down = await outage(tg, process, run)
                    finally:
                        await reap(process)
                    process = await lancelot_run(env)
                    pid = await beating(home, after=pid)
                    beat = time.monotonic()
                    await tg.wait_for(lambda n=run: len(told(tg, BACK_MARK)) == n, timeout=LIMIT)
                    back = time.monotonic() - beat
                    print(
                        f"run {run}: kill -9 -> owner told {down:.1f} s; "
                        f"first beat -> back told {back:.1f} s",
                        flush=True,
                    )
            await reap(process)
            sent = len(told(tg, DOWN_MARK)), len(told(tg, BACK_MARK))
    print(f"messages: {sent[0]} down, {sent[1]} back, for {runs} kills")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    asyncio.run(main(parser.parse_args().runs))
