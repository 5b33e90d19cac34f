"""Owner messages answered through the fake Bot API: Lancelot vs a bare PTB echo bot.

Both bots run in this process against the same FakeTelegram (one at a time: two pollers on
one token would 409 each other), in alternating rounds. Measured per bot:

- latency: one message at a time, from injecting it at the fake to the reply arriving there;
  Lancelot's added latency is its percentile minus the echo bot's.
- throughput: a burst of messages, from the first injection to the last reply.

Pacing: Lancelot's outbox sends at most a burst of 3 then 1 message per second to any one chat
(Telegram's own limit); the echo bot does not pace. Measured from a single chat, Lancelot's
throughput would simply be that 1 msg/s. So the main figures use many chats (each owner id its
own private chat, at most --per-chat messages each, within the burst); --paced shows the
single-chat case too.

Usage (from the repository root):

    python benchmarks/telegram.py                    # 3 rounds, 300 latency + 600 burst msgs
    python benchmarks/telegram.py --rounds 1 --latency 100 --burst 200 --paced
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import socket
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

# Run as a script, this file's folder comes first on sys.path and this module would shadow
# the `telegram` package; the repository root is needed for the fake (tests.fakes).
HERE = Path(__file__).resolve().parent
sys.path[:] = [str(HERE.parent), *(p for p in sys.path if Path(p or ".").resolve() != HERE)]
os.environ.setdefault("PTB_TIMEDELTA", "true")

from telegram import Update  # noqa: E402
from telegram.ext import ApplicationBuilder, ContextTypes, MessageHandler, filters  # noqa: E402
from telegram.request import HTTPXRequest  # noqa: E402

from bot.app import assemble  # noqa: E402
from bot.telegram import TelegramTuning, attach_telegram  # noqa: E402
from core.config import load_settings  # noqa: E402
from tests.fakes.telegram import FakeTelegram  # noqa: E402

FIRST_CHAT = 50_000
MESSAGE = "/help"
Bot = Callable[[FakeTelegram, int], contextlib.AbstractAsyncContextManager[None]]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.asynccontextmanager
async def echo_bot(tg: FakeTelegram, chats: int) -> AsyncIterator[None]:
    """The baseline: a bare Application with an echoing MessageHandler, started by hand."""

    async def echo(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.effective_chat is not None
        assert update.effective_message is not None
        await update.effective_chat.send_message(update.effective_message.text or "")

    plain_http = {"verify": False}  # loopback; the same for both bots
    app = (
        ApplicationBuilder()
        .token(tg.token)
        .base_url(tg.base_url)
        .request(HTTPXRequest(connection_pool_size=64, httpx_kwargs=plain_http))
        .get_updates_request(HTTPXRequest(httpx_kwargs=plain_http))
        .build()
    )
    app.add_handler(MessageHandler(filters.TEXT, echo))
    async with app:
        await app.start()
        assert app.updater is not None
        await app.updater.start_polling(poll_interval=0, timeout=10)
        try:
            yield
        finally:
            await app.updater.stop()
            await app.stop()


@contextlib.asynccontextmanager
async def lancelot(tg: FakeTelegram, chats: int) -> AsyncIterator[None]:
    """Lancelot through its composition root, every chat an owner, production delivery."""
    home = Path(tempfile.mkdtemp(prefix="lancelot-bench-"))
    settings = load_settings(
        environ={
            "LANCELOT_HOME": str(home),
            "LANCELOT_WEB_PORT": str(free_port()),
            "TELEGRAM_BOT_TOKEN": tg.token,
            "TELEGRAM_API_BASE_URL": tg.base_url,
            "TELEGRAM_OWNER_ID": ",".join(str(FIRST_CHAT + i) for i in range(chats)),
        }
    )
    async with assemble(settings) as app:
        await attach_telegram(app, tuning=TelegramTuning(poll_timeout=10, verify_tls=False))
        app.health.mark_ready()
        yield


async def latencies(tg: FakeTelegram, count: int, chats: int) -> list[float]:
    """Milliseconds from injection to reply, one message at a time, chats in turn."""
    found = []
    for i in range(count):
        before = len(tg.sent)
        started = time.perf_counter()
        tg.user_message(MESSAGE, user_id=FIRST_CHAT + i % chats)
        await tg.wait_for(lambda n=before: len(tg.sent) > n, timeout=30)  # type: ignore[misc]
        found.append((time.perf_counter() - started) * 1000)
    return found


async def burst(tg: FakeTelegram, count: int, chats: int) -> float:
    """Messages per second for `count` messages injected at once over `chats` chats."""
    before = len(tg.sent)
    started = time.perf_counter()
    for i in range(count):
        tg.user_message(MESSAGE, user_id=FIRST_CHAT + i % chats)
    await tg.wait_for_sent(before + count, timeout=300)
    return count / (time.perf_counter() - started)


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


async def measure(bot: Bot, tg: FakeTelegram, args: argparse.Namespace) -> dict[str, Any]:
    chats = max(args.latency, args.burst // args.per_chat)
    async with bot(tg, chats):
        await latencies(tg, 20, chats)  # warm-up
        lat = await latencies(tg, args.latency, chats)
        await asyncio.sleep(1.5)  # refill the per-chat buckets after the latency pass
        rate = await burst(tg, args.burst, args.burst // args.per_chat)
        await asyncio.sleep(0.5)
    return {"lat": lat, "rate": rate}


async def paced(bot: Bot, tg: FakeTelegram, count: int) -> float:
    """Seconds for `count` messages from one chat."""
    async with bot(tg, 1):
        await latencies(tg, 1, 1)
        await asyncio.sleep(3)
        before = len(tg.sent)
        started = time.perf_counter()
        for _ in range(count):
            tg.user_message(MESSAGE, user_id=FIRST_CHAT)
        await tg.wait_for_sent(before + count, timeout=300)
        return time.perf_counter() - started


def summary(runs: list[dict[str, Any]]) -> dict[str, float]:
    lat = [x for run in runs for x in run["lat"]]
    return {
        "p50": percentile(lat, 50),
        "p99": percentile(lat, 99),
        "rate": statistics.median(run["rate"] for run in runs),
    }


async def main(args: argparse.Namespace) -> None:
    logging.basicConfig(level=logging.ERROR)
    results: dict[str, list[dict[str, Any]]] = {"echo": [], "lancelot": []}
    async with FakeTelegram() as tg:
        for round_no in range(args.rounds):
            for name, bot in (("echo", echo_bot), ("lancelot", lancelot)):
                results[name].append(await measure(bot, tg, args))
                last = results[name][-1]
                print(
                    f"round {round_no + 1} {name:8}: p50 {percentile(last['lat'], 50):6.2f} ms"
                    f"  p99 {percentile(last['lat'], 99):6.2f} ms  burst {last['rate']:6.1f} msg/s"
                )
        echo, lance = summary(results["echo"]), summary(results["lancelot"])
        print()
        print(f"{'':10}{'p50 ms':>10}{'p99 ms':>10}{'msg/s':>10}")
        print(f"{'echo':10}{echo['p50']:10.2f}{echo['p99']:10.2f}{echo['rate']:10.1f}")
        print(f"{'lancelot':10}{lance['p50']:10.2f}{lance['p99']:10.2f}{lance['rate']:10.1f}")
        print(
            f"added latency: p50 {lance['p50'] - echo['p50']:.2f} ms, "
            f"p99 {lance['p99'] - echo['p99']:.2f} ms (target p99 <= 20 ms)"
        )
        print(f"throughput: {lance['rate'] / echo['rate']:.2f}x the echo bot (target >= 0.7x)")
        if args.paced:
            for name, bot in (("echo", echo_bot), ("lancelot", lancelot)):
                took = await paced(bot, tg, args.paced_count)
                print(f"one chat, {args.paced_count} messages at once: {name} {took:.2f} s")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--latency", type=int, default=300, help="messages timed one by one")
    parser.add_argument("--burst", type=int, default=600, help="messages injected at once")
    parser.add_argument("--per-chat", type=int, default=2, help="burst messages per chat")
    parser.add_argument("--paced", action="store_true", help="also time one chat's pacing")
    parser.add_argument("--paced-count", type=int, default=10)
    asyncio.run(main(parser.parse_args()))
