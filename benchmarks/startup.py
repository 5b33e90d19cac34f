"""`lancelot run`: how soon it serves and how much memory it holds.

Default: from start to /health/ready answering ready, and idle resident memory, with no
channel configured (issue 2: <= 1.5 s to ready without a local model; idle RSS <= 100 MB).

--telegram: side by side with the bare python-telegram-bot bot of benchmarks/telegram.py,
each on its own fake Bot API, run in alternation: start to the first getUpdates, idle RSS
3 s later, and for Lancelot (Telegram and anthropic configured, the fake Anthropic server
answering; no local model, no sandbox warm-up, as in benchmarks/telegram.py) the RSS once
its first plain message has been answered through the SDK (issue 36: idle RSS <= 1.3x the bare bot's, start <= 1.2x, first anthropic call <= +25 MB).
--no-engine points DOCKER_HOST at a missing socket (a host without Docker).
--imports: where the start goes, each bot started once under `-X importtime` until its first
getUpdates: the modules it imported and their own import time, by top-level package.

Run: .venv/bin/python benchmarks/startup.py [--runs 10] [--telegram [--no-engine] | --imports]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import compileall
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # the fakes (tests.fakes), as benchmarks/telegram.py does
IDLE_SECONDS = 3.0
Spawn = Callable[[], Coroutine[Any, Any, asyncio.subprocess.Process]]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process so far (less swayed by a busy machine than wall time)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def one_run(home: Path) -> tuple[float, float]:
    port = free_port()
    env = {**os.environ, "LANCELOT_HOME": str(home), "LANCELOT_WEB_PORT": str(port)}
    lancelot = Path(sys.executable).with_name("lancelot")
    started = time.perf_counter()
    proc = subprocess.Popen(
        [str(lancelot), "run"], stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env
    )
    try:
        while True:
            try:
                with urllib.request.urlopen(
                    f"http://127.0.0.1:{port}/health/ready", timeout=1
                ) as r:
                    if json.load(r)["ready"]:
                        break
            except OSError:
                time.sleep(0.005)
            if proc.poll() is not None:
                raise SystemExit(f"lancelot exited with {proc.returncode}")
        ready = time.perf_counter() - started
        time.sleep(IDLE_SECONDS)
        return ready, rss_mb(proc.pid)
    finally:
        proc.terminate()
        proc.wait(30)


def main(runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        results = [one_run(Path(tmp) / "home") for _ in range(runs)]
    ready = sorted(r for r, _ in results)
    rss = [m for _, m in results]
    print(
        f"start -> ready: median {statistics.median(ready):.2f} s, max {ready[-1]:.2f} s "
        f"over {runs} runs (first run creates the databases: {results[0][0]:.2f} s)"
    )
    print(f"idle RSS: median {statistics.median(rss):.1f} MB, max {max(rss):.1f} MB")


@dataclass(frozen=True)
class Start:
    """Until the first getUpdates: wall seconds and the bot's CPU seconds."""

    wall: float
    cpu: float


async def first_poll(tg: Any, spawn: Spawn) -> tuple[asyncio.subprocess.Process, Start]:
    """Start a bot; how long until its first getUpdates is parked on the fake."""
    started = time.perf_counter()
    proc = await spawn()
    await tg.wait_for(lambda: tg.is_polling, timeout=120)
    return proc, Start(time.perf_counter() - started, cpu_seconds(proc.pid))


async def bare_bot_run() -> tuple[Start, float]:
    """The bare bot: start to the first getUpdates, idle RSS."""
    from tests.fakes.processes import reap, spawn
    from tests.fakes.telegram import FakeTelegram

    async with FakeTelegram() as tg:
        script = [sys.executable, str(REPO / "benchmarks" / "telegram.py"), "--echo-bot"]
        proc, start = await first_poll(
            tg,
            lambda: spawn(*script, tg.base_url, tg.token, stdin=asyncio.subprocess.DEVNULL),
        )
        try:
            await asyncio.sleep(IDLE_SECONDS)
            return start, rss_mb(proc.pid)
        finally:
            proc.terminate()
            await reap(proc)


async def lancelot_telegram_run(home: Path, no_engine: bool) -> tuple[Start, float, float]:
    """Lancelot: start to the first getUpdates, idle RSS, RSS after the first anthropic call."""
    from tests.fakes.lancelot_process import lancelot_run, run_env, stop
    from tests.fakes.llm import FakeAnthropic, Reply
    from tests.fakes.telegram import FakeTelegram

    owner = 50_000
    async with FakeTelegram() as tg, FakeAnthropic() as model:
        model.default = Reply(json={"response_to_user": "fake answer"})
        engine = {"DOCKER_HOST": f"unix://{home}/no-engine.sock"} if no_engine else {}
        env = run_env(
            home,
            tg,
            owner=owner,
            LANCELOT_SANDBOX_WARM_AT_START="false",  # as benchmarks/telegram.py: no pool,
            FEATURE_LOCAL_MODEL="false",  # and no local model (its weights would be counted)
            LANCELOT_PROVIDER="anthropic",
            ANTHROPIC_API_KEY="sk-ant-bench-not-real",
            ANTHROPIC_BASE_URL=model.base_url,
            **engine,
        )
        proc, start = await first_poll(tg, lambda: lancelot_run(env))
        try:
            await asyncio.sleep(IDLE_SECONDS)
            idle = rss_mb(proc.pid)
            tg.user_message("what is on today", user_id=owner)
            answered = lambda: any("fake answer" in m["plain_text"] for m in tg.sent)  # noqa: E731
            await tg.wait_for(answered, timeout=120)  # the progress card, edited into the answer
            await asyncio.sleep(1.0)
            return start, idle, rss_mb(proc.pid)
        finally:
            await stop(proc)


def compile_sources() -> None:
    """Lancelot's bytecode, as an installed Lancelot has it (pip compiles on install; the
    bare bot's library is installed): with PYTHONDONTWRITEBYTECODE set, a clone would compile
    its ~350 modules again at every start, about a second of CPU that is no part of it."""
    for package in ("bot", "core", "soul", "skills"):
        compileall.compile_dir(REPO / package, quiet=1)


def _median(values: list[float]) -> float:
    return statistics.median(values)


async def side_by_side(runs: int, no_engine: bool) -> None:
    """Both bots in alternation, `runs` times each; medians and ratios."""
    compile_sources()
    load = os.getloadavg()
    bare: list[tuple[Start, float]] = []
    ours: list[tuple[Start, float, float]] = []
    with tempfile.TemporaryDirectory(prefix="lancelot-bench-") as tmp:
        for r in range(runs):
            home = Path(tmp) / f"home{r}"  # a fresh home each time, as a first start
            if r % 2:
                ours.append(await lancelot_telegram_run(home, no_engine))
                bare.append(await bare_bot_run())
            else:
                bare.append(await bare_bot_run())
                ours.append(await lancelot_telegram_run(home, no_engine))
    after = os.getloadavg()
    b_rss = _median([m for _, m in bare])
    l_rss = _median([m for _, m, _ in ours])
    called = _median([m - i for _, i, m in ours])
    print(f"over {runs} runs each, medians{' (no Docker engine)' if no_engine else ''}:")
    for what in ("wall", "cpu"):
        b = _median([getattr(s, what) for s, _ in bare])
        c = _median([getattr(s, what) for s, _, _ in ours])
        print(f"  start -> first getUpdates, {what}: bare bot {b:.2f} s, lancelot {c:.2f} s"
              f" ({c / b:.2f}x)")  # fmt: skip
    print(f"  idle RSS: bare bot {b_rss:.1f} MB, lancelot {l_rss:.1f} MB ({l_rss / b_rss:.2f}x)")
    print(f"  lancelot RSS after its first anthropic call: +{called:.1f} MB over idle")
    print(f"load average: {load[0]:.2f} at the start, {after[0]:.2f} at the end "
          f"({os.cpu_count()} CPUs)")  # fmt: skip


IMPORT_LINE = re.compile(r"import time:\s+(\d+) \|\s+\d+ \|\s+(\S+)")


def imports_by_package(log: str) -> tuple[collections.Counter[str], int]:
    """Microseconds of each top-level package's own import time (`-X importtime` lines),
    and how many modules were imported."""
    found = IMPORT_LINE.findall(log)
    spent: collections.Counter[str] = collections.Counter()
    for self_us, module in found:
        spent[module.split(".")[0]] += int(self_us)
    return spent, len(found)


async def importing(tg: Any, spawn: Spawn) -> None:
    """A bot started once (under -X importtime), stopped at its first getUpdates."""
    from tests.fakes.processes import reap

    proc, _ = await first_poll(tg, spawn)
    proc.terminate()
    await reap(proc)


async def import_profile(top: int = 12) -> None:
    """Both bots' imports to their first getUpdates, by package, side by side."""
    from tests.fakes.lancelot_process import lancelot_run, run_env
    from tests.fakes.processes import spawn
    from tests.fakes.telegram import FakeTelegram

    compile_sources()
    timed = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1"}
    with tempfile.TemporaryDirectory(prefix="lancelot-bench-") as tmp:
        logs = [Path(tmp) / "bare.log", Path(tmp) / "lancelot.log"]
        async with FakeTelegram() as tg:
            script = [sys.executable, str(REPO / "benchmarks" / "telegram.py"), "--echo-bot"]
            with logs[0].open("wb") as err:
                await importing(
                    tg, lambda: spawn(*script, tg.base_url, tg.token, env=timed, stderr=err,
                                      stdin=asyncio.subprocess.DEVNULL),
                )  # fmt: skip
        async with FakeTelegram() as tg:
            env = run_env(Path(tmp) / "home", tg, owner=50_000, PYTHONPROFILEIMPORTTIME="1",
                          LANCELOT_SANDBOX_WARM_AT_START="false", FEATURE_LOCAL_MODEL="false")  # fmt: skip
            with logs[1].open("wb") as err:
                await importing(tg, lambda: lancelot_run(env, stderr=err))
        bare, ours = (imports_by_package(log.read_text(errors="replace")) for log in logs)
    print("imports until the first getUpdates (own import time, -X importtime):")
    for name, (spent, modules) in (("bare bot", bare), ("lancelot", ours)):
        print(f"  {name}: {modules} modules, {spent.total() / 1000:.0f} ms")
    print(f"  {'package':<28}{'bare bot':>10}{'lancelot':>10}   (ms)")
    for package, us in ours[0].most_common(top):
        print(f"  {package:<28}{bare[0][package] / 1000:>10.0f}{us / 1000:>10.0f}")
    print(f"load average: {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument(
        "--telegram", action="store_true", help="side by side with a bare PTB bot (issue 36)"
    )
    parser.add_argument("--no-engine", action="store_true", help="with --telegram: no Docker")
    parser.add_argument("--imports", action="store_true", help="each bot's imports, by package")
    args = parser.parse_args()
    if args.imports:
        asyncio.run(import_profile())
    elif args.telegram:
        asyncio.run(side_by_side(args.runs, args.no_engine))
    else:
        main(args.runs)
