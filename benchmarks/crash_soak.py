"""Nothing lost, nothing twice, across kill -9 and an outage (issue 20, item 4).

1. Soak: `lancelot run` (a real process) against the fake Bot API, the owner sending --rate
   messages a second for --minutes, killed with SIGKILL --kills times at random moments and
   started again at once, with --outages Bot API outages (502 for --outage-seconds) and
   --storms 429 storms (the next 5-30 sends told to wait 1-5 s) at random moments too. A
   start that stops on its own (one during an outage cannot reach the Bot API) is started
   again after 2 s, as the container's `restart: unless-stopped` does. Every --run-every
   seconds (on average) the owner also sends `/run rm -rf` of a folder of its own and presses
   Approve or Deny on its card, a --press-kills share of them followed within 60 ms by a
   kill -9 (benchmarks/soak_presses.py).
   Reported: messages, lost (no reply), sent twice, and for each one sent twice how long
   after Telegram accepted its first copy the kill came (the window no platform lets us
   close: accepted, not yet marked delivered), and how long that window is for every reply
   (Telegram accepting it -> its delivered mark queued; the group commit's latency follows);
   for the `/run` commands: lost, duplicate approvals or cards, and commands run twice.
2. Outage: Lancelot in this process (production delivery and poll timings) while the fake
   answers 502 for --outage seconds, with a card queued and an owner message waiting at
   Telegram meanwhile. Reported: after the fake is back, how long until getUpdates works,
   the queued card lands, and the owner's message is answered.

Usage (from the repository root):

    python benchmarks/crash_soak.py
    python benchmarks/crash_soak.py --minutes 20 --kills 5 --outages 2 --storms 4 --seed 7
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import random
import re
import signal
import sqlite3
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path[:] = [str(REPO), *(p for p in sys.path if Path(p or ".").resolve() != HERE)]
os.environ.setdefault("PTB_TIMEDELTA", "true")

from benchmarks.soak_presses import Presses, in_window, kill_after  # noqa: E402
from bot.app import assemble  # noqa: E402
from bot.channels.telegram.application import TelegramTuning  # noqa: E402
from bot.channels.telegram.setup import attach_telegram  # noqa: E402
from bot.pairing import OwnerBook  # noqa: E402
from core.config import load_settings  # noqa: E402
from core.errors import DeliveryDeferred  # noqa: E402
from core.events import Card, CardKind  # noqa: E402
from tests.fakes.lancelot_process import free_port, lancelot_run, run_env  # noqa: E402
from tests.fakes.telegram import FakeTelegram  # noqa: E402

OWNER = 1001
RESTART_AFTER = 2.0  # seconds before a process that stopped on its own is started again
REPLY = re.compile(r"/m(\d+)\b")


async def run_lancelot(tg: FakeTelegram, home: Path) -> asyncio.subprocess.Process:
    env = run_env(
        home,
        tg,
        owner=OWNER,
        LANCELOT_LIMITS_RATE_PER_MINUTE="100000",
        LANCELOT_SANDBOX_WARM_AT_START="false",
        FEATURE_LOCAL_MODEL="false",
    )
    return await lancelot_run(env, stderr=(home.parent / "stderr.log").open("ab"))


def replies(tg: FakeTelegram) -> Counter[int]:
    return Counter(int(m.group(1)) for s in tg.sent if (m := REPLY.search(s["plain_text"])))


def accepted(tg: FakeTelegram, n: int) -> list[float]:
    """When Telegram accepted each reply naming /mN (monotonic), first to last."""
    return [
        call.at
        for call in tg.calls
        if call.method == "sendMessage"
        and call.status == 200
        and (found := REPLY.search(str(call.params.get("text", ""))))
        and int(found.group(1)) == n
    ]


def marked(home: Path) -> dict[int, float]:
    """For each /mN, when its reply's delivered mark was written (wall clock, from the row)."""
    db = sqlite3.connect(home / "state.db")
    try:
        rows = db.execute(
            "SELECT card, updated_at FROM outbox WHERE state = 'delivered' AND kind = 'send'"
        ).fetchall()
    finally:
        db.close()
    return {int(m.group(1)): float(at) for card, at in rows if (m := REPLY.search(card))}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def plan(args: argparse.Namespace, rng: random.Random, duration: float) -> list[tuple[float, str]]:
    """When each fault comes: kills, outages (start, then end) and 429 storms."""
    events = [(rng.uniform(5, duration - 5), "kill") for _ in range(args.kills)]
    for _ in range(args.outages):
        start = rng.uniform(5, duration - args.outage_seconds - 5)
        events += [(start, "down"), (start + args.outage_seconds, "up")]
    events += [(rng.uniform(5, duration - 5), "storm") for _ in range(args.storms)]
    return sorted(events)


class Lancelot:
    """The `lancelot run` process of the soak, killed and started again by the fault plan and
    by the presses alike (one at a time)."""

    def __init__(self, tg: FakeTelegram, home: Path) -> None:
        self.tg, self.home = tg, home
        self.kills: list[float] = []
        self.exits: list[int] = []  # exit codes of starts that stopped on their own
        self._lock = asyncio.Lock()
        self.proc: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        self.proc = await run_lancelot(self.tg, self.home)

    async def kill(self) -> None:
        """SIGKILL, then start again at once (messages keep coming meanwhile)."""
        async with self._lock:
            assert self.proc is not None
            with contextlib.suppress(ProcessLookupError):  # it may have just stopped
                self.proc.kill()
            self.kills.append(time.monotonic())
            await self.proc.wait()
            await self.start()

    async def revive(self) -> None:
        """A start that stopped on its own (one during an outage cannot reach the Bot API)
        is started again after a pause, as compose's `restart: unless-stopped` does."""
        async with self._lock:
            assert self.proc is not None
            if self.proc.returncode is None:
                return
            self.exits.append(self.proc.returncode)
            await asyncio.sleep(RESTART_AFTER)
            await self.start()

    async def stop(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        await self.proc.wait()


async def soak(args: argparse.Namespace, rng: random.Random) -> None:
    home = Path(tempfile.mkdtemp(prefix="lancelot-soak-")) / "home"
    duration = args.minutes * 60
    events = plan(args, rng, duration)
    storms = 0
    sent = 0
    asked = 0
    async with FakeTelegram() as tg:
        lancelot = Lancelot(tg, home)
        presses = Presses(tg, home, rng, lancelot.kill, args.press_kills)
        await lancelot.start()
        await tg.wait_for(lambda: tg.is_polling, timeout=120)
        started = time.monotonic()
        next_run = rng.expovariate(1 / args.run_every) if args.run_every else duration
        while (elapsed := time.monotonic() - started) < duration:
            await lancelot.revive()
            while events and elapsed >= events[0][0]:
                _, what = events.pop(0)
                if what == "kill":
                    await lancelot.kill()
                elif what == "down":
                    tg.go_down()
                elif what == "up":
                    tg.come_back()
                else:  # a 429 storm: the next sends are told to wait 1-5 s
                    storms += 1
                    wait, times = rng.randint(1, 5), rng.randint(5, 30)
                    tg.fail_next("sendMessage", 429, retry_after=wait, times=times)
            if elapsed >= next_run:
                presses.ask(asked)
                asked += 1
                next_run += rng.expovariate(1 / args.run_every)
            tg.user_message(f"/m{sent}", user_id=OWNER)
            sent += 1
            await asyncio.sleep(rng.expovariate(args.rate))
        tg.come_back()
        expected = set(range(sent))
        await lancelot.revive()
        with contextlib.suppress(TimeoutError):
            await tg.wait_for(lambda: set(replies(tg)) >= expected, timeout=300)
        await presses.finish()
        await lancelot.stop()
        counts = replies(tg)
        sent_texts = list(tg.sent)
        tg_calls = list(tg.calls)
        wall_offset = time.time() - time.monotonic()
        marks = marked(home)
        landed = {n: accepted(tg, n) for n in counts}
        refused = sum(c.status == 429 for c in tg.calls)
    kills, exits = lancelot.kills, lancelot.exits
    lost = sorted(expected - set(counts))
    doubled = sorted(n for n, c in counts.items() if c > 1)
    windows = []
    for n in doubled:
        first = landed[n][0]
        windows.append(kill_after(first, kills))
    # accepted -> delivered mark written, for every reply (the last copy of a doubled one)
    gaps = [marks[n] - (landed[n][-1] + wall_offset) for n in marks if landed.get(n)]
    widest = max(gaps, default=0.0)
    outside = [w for w in windows if not in_window(w, widest)]  # nan (no kill) counts too
    pressed = presses.audit(kills, widest)
    print(f"soak: {sent} owner messages over {args.minutes} min at ~{args.rate}/s, "
          f"{len(kills)} kill -9s ({presses.press_kills} right after a press), "
          f"{args.outages} outages of {args.outage_seconds:.0f} s, "
          f"{storms} 429 storms ({refused} sends refused with 429); {len(exits)} start(s) "
          f"stopped on their own (exit {exits}) and were started again")  # fmt: skip
    print(f"  lost: {len(lost)} {lost[:10]}")
    for n in doubled[:5]:  # what each copy said
        copies = [s["plain_text"][:80] for s in sent_texts if REPLY.search(s["plain_text"])
                  and int(REPLY.search(s["plain_text"]).group(1)) == n]  # fmt: skip
        print(f"  /m{n} copies: {copies}")
        calls = [(round(c.at - started, 3), c.status) for c in tg_calls if c.method == "sendMessage"
                 and (f := REPLY.search(str(c.params.get("text", "")))) and int(f.group(1)) == n]  # fmt: skip
        print(
            f"    sendMessage at (s, status): {calls}; kills at {[round(k - started, 3) for k in kills]}"
        )
    print(f"  sent twice: {len(doubled)}; the kill came {[round(w * 1000, 1) for w in windows]} ms "
          f"after Telegram accepted the first copy (negative: during its send); outside the measured window: {len(outside)}")  # fmt: skip
    print(f"  Telegram accepted -> delivered mark queued ({len(gaps)} replies): p50 "
          f"{percentile(gaps, 0.5) * 1000:.1f} ms, p99 {percentile(gaps, 0.99) * 1000:.1f} ms, "
          f"max {widest * 1000:.1f} ms")  # fmt: skip
    print(f"  /run with presses: {json.dumps(pressed)}")


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
            await attach_telegram(
                app,
                tuning=TelegramTuning(poll_timeout=10, verify_tls=False),
                owners=OwnerBook(app.settings, app.home, channels=list(app.channels)),
            )
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
    parser.add_argument("--outages", type=int, default=2, help="Bot API outages in the soak")
    parser.add_argument("--outage-seconds", type=float, default=30.0, help="each one's length")
    parser.add_argument("--storms", type=int, default=3, help="429 storms in the soak")
    parser.add_argument(
        "--run-every",
        type=float,
        default=20.0,
        help="seconds between /run commands whose cards are pressed (0: none)",
    )
    parser.add_argument("--press-kills", type=float, default=0.3,
                        help="share of presses followed within 60 ms by a kill -9")  # fmt: skip
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
