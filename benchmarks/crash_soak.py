"""Nothing lost, nothing twice, across kill -9 and an outage (issue 20, item 4).

1. Soak: `lancelot run` (a real process) against the fake Bot API, the owner sending --rate
   messages a second for --minutes, killed with SIGKILL --kills times at random moments and
   started again at once. Reported: messages, lost (no reply), sent twice, and for each one
   sent twice how long after Telegram accepted its first copy the kill came (the window no
   platform lets us close: accepted, not yet marked delivered).
2. Outage: Lancelot in this process (production delivery and poll timings) while the fake
   answers 502 for --outage seconds, with a card queued and an owner message waiting at
   Telegram meanwhile. Reported: after the fake is back, how long until getUpdates works,
   the queued card lands, and the owner's message is answered.

Usage (from the repository root):

    python benchmarks/crash_soak.py
    python benchmarks/crash_soak.py --minutes 20 --kills 5 --outage 60 --seed 7
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import random
import re
import signal
import socket
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path[:] = [str(REPO), *(p for p in sys.path if Path(p or ".").resolve() != HERE)]
os.environ.setdefault("PTB_TIMEDELTA", "true")

from bot.app import assemble  # noqa: E402
from bot.telegram import TelegramTuning, attach_telegram  # noqa: E402
from core.config import load_settings  # noqa: E402
from core.errors import DeliveryDeferred  # noqa: E402
from core.events import Card, CardKind  # noqa: E402
from tests.fakes.telegram import FakeTelegram  # noqa: E402

OWNER = 1001
REPLY = re.compile(r"/m(\d+)\b")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def lancelot_run(tg: FakeTelegram, home: Path) -> asyncio.subprocess.Process:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TELEGRAM_", "LANCELOT_"))}
    env.update(
        LANCELOT_HOME=str(home),
        LANCELOT_CONFIG=str(REPO / "config" / "lancelot.yaml"),
        LANCELOT_WEB_PORT=str(free_port()),
        LANCELOT_LIMITS_RATE_PER_MINUTE="100000",
        LANCELOT_SANDBOX_WARM_AT_START="false",
        FEATURE_LOCAL_MODEL="false",
        TELEGRAM_BOT_TOKEN=tg.token,
        TELEGRAM_OWNER_ID=str(OWNER),
        TELEGRAM_API_BASE_URL=tg.base_url,
    )
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", "run", env=env, cwd=REPO,
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
        stderr=(home.parent / "stderr.log").open("ab"),
    )  # fmt: skip


def replies(tg: FakeTelegram) -> Counter[int]:
    return Counter(int(m.group(1)) for s in tg.sent if (m := REPLY.search(s["plain_text"])))


def first_accepted(tg: FakeTelegram, n: int) -> float:
    for call in tg.calls:
        text = str(call.params.get("text", ""))
        if call.method == "sendMessage" and call.status == 200:
            found = REPLY.search(text)
            if found and int(found.group(1)) == n:
                return call.at
    return float("nan")


async def soak(args: argparse.Namespace, rng: random.Random) -> None:
    home = Path(tempfile.mkdtemp(prefix="lancelot-soak-")) / "home"
    duration = args.minutes * 60
    kill_at = sorted(rng.uniform(5, duration - 5) for _ in range(args.kills))
    kills: list[float] = []
    sent = 0
    async with FakeTelegram() as tg:
        proc = await lancelot_run(tg, home)
        await tg.wait_for(lambda: tg.is_polling, timeout=120)
        started = time.monotonic()
        while (elapsed := time.monotonic() - started) < duration:
            if kill_at and elapsed >= kill_at[0]:
                kill_at.pop(0)
                proc.kill()
                kills.append(time.monotonic())
                await proc.wait()
                proc = await lancelot_run(tg, home)  # messages keep coming meanwhile
            tg.user_message(f"/m{sent}", user_id=OWNER)
            sent += 1
            await asyncio.sleep(rng.expovariate(args.rate))
        expected = set(range(sent))
        with contextlib.suppress(TimeoutError):
            await tg.wait_for(lambda: set(replies(tg)) >= expected, timeout=120)
        proc.send_signal(signal.SIGTERM)
        await proc.wait()
        counts = replies(tg)
    lost = sorted(expected - set(counts))
    doubled = sorted(n for n, c in counts.items() if c > 1)
    windows = []
    for n in doubled:
        accepted = first_accepted(tg, n)
        windows.append(min((k - accepted for k in kills if k > accepted), default=float("nan")))
    print(f"soak: {sent} owner messages over {args.minutes} min at ~{args.rate}/s, "
          f"{len(kills)} kill -9s")  # fmt: skip
    print(f"  lost: {len(lost)} {lost[:10]}")
    print(f"  sent twice: {len(doubled)}; the kill came {[round(w * 1000, 1) for w in windows]} ms "
          "after Telegram accepted the first copy")  # fmt: skip


async def outage(args: argparse.Namespace) -> None:
    home = Path(tempfile.mkdtemp(prefix="lancelot-outage-"))
    async with FakeTelegram() as tg:
        settings = load_settings(
            environ={
                "LANCELOT_HOME": str(home),
                "LANCELOT_WEB_PORT": str(free_port()),
                "TELEGRAM_BOT_TOKEN": tg.token,
                "TELEGRAM_API_BASE_URL": tg.base_url,
                "TELEGRAM_OWNER_ID": str(OWNER),
                "LANCELOT_SANDBOX_WARM_AT_START": "false",
                "FEATURE_LOCAL_MODEL": "false",
            }
        )
        async with assemble(settings) as app:
            await attach_telegram(app, tuning=TelegramTuning(poll_timeout=10, verify_tls=False))
            await tg.wait_for(lambda: tg.is_polling, timeout=30)
            tg.go_down()
            with contextlib.suppress(DeliveryDeferred):
                await app.bus.send("telegram", str(OWNER), Card(CardKind.NOTICE, "Queued card"))
            tg.user_message("/m1", user_id=OWNER)  # waits at Telegram
            await asyncio.sleep(args.outage)
            tg.come_back()
            back = time.monotonic()
            calls = len(tg.calls)
            await tg.wait_for(
                lambda: any(c.method == "getUpdates" and c.status == 200
                            for c in tg.calls[calls:]), timeout=120)  # fmt: skip
            polled = time.monotonic() - back
            await tg.wait_for(lambda: any(s["plain_text"] == "Queued card" for s in tg.sent), 120)
            card = time.monotonic() - back
            await tg.wait_for(lambda: 1 in replies(tg), timeout=120)
            answered = time.monotonic() - back
    print(f"outage of {args.outage:.0f} s, after the Bot API came back: getUpdates works in "
          f"{polled:.1f} s, the queued card lands in {card:.1f} s, the owner's message is "
          f"answered in {answered:.1f} s")  # fmt: skip


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=2.0)
    parser.add_argument("--rate", type=float, default=3.0, help="owner messages a second")
    parser.add_argument("--kills", type=int, default=5)
    parser.add_argument("--outage", type=float, default=60.0, help="seconds of 502s")
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    logging.getLogger("telegram").setLevel(logging.CRITICAL)  # PTB on each 502 of the outage
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "big")
    print(f"seed {seed}; load average {os.getloadavg()}")
    await soak(args, random.Random(seed))
    await outage(args)
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    asyncio.run(main())
