"""Owner messages answered through the fake Bot API: `lancelot run` vs a bare PTB echo bot.

Both bots are real processes, each polling its own fake Telegram server (two pollers on one
token would 409 each other); the fakes, and the instant fake model Lancelot's agent calls, run
in this process. Three shapes, each bot measured in alternation round by round so the noise of
the machine falls on both:

- sequential: one chat, each reply awaited before the next message (a quick back-and-forth);
- burst: one chat, --burst messages at once;
- many: --chats chats x --per-chat messages, all at once (a busy owner's burst).

Per shape and bot: throughput (messages / wall seconds from the first injection to the last
reply), CPU per message (the bot process's user+system time, all threads, /proc/PID/stat),
and latency p50/p99 from the fake server's clock: the update made available to getUpdates ->
the sendMessage that answers it received (the nth reply in a chat answers its nth message).

Pacing: as shipped, Lancelot sends at most 30 messages a second on a channel, all chats
together (Telegram's limit; a burst of 30 goes at once), and the echo bot does not pace; so
the burst and many shapes are capped at 30 msg/s by design, and a sequential round (20
messages, then a 1 s pause) stays within the burst. --global-per-second 0 turns the pace off
to measure what Lancelot itself costs.

Lancelot runs as a user's would: `python -m bot.cli run` with the shipped settings and pacing,
except the owner rate limit (60 a minute per sender by default: the shapes would be refused,
which is not speed) and no sandbox warm-up (no Docker needed). The messages cycle through
/help, /status and plain text; plain text goes to the agent, which calls the fake OpenAI server
(at once, in the JSON final answer Lancelot asks for: one call, as with a real model). The
echo bot sends every text back; with --model-bot, a third bot answers plain text with one
openai SDK call to the same fake model first (the fair baseline for a plain message, since
the echo bot calls no model). The model calls made and their request sizes are reported.

Usage (from the repository root):

    python benchmarks/telegram.py
    python benchmarks/telegram.py --rounds 5 --shapes many
    python benchmarks/telegram.py --model-bot --global-per-second 0 --against /tmp/old
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict, deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Run as a script, this file's folder comes first on sys.path and this module would shadow
# the `telegram` package; the repository root is needed for the fakes (tests.fakes).
HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path[:] = [str(REPO), *(p for p in sys.path if Path(p or ".").resolve() != HERE)]
os.environ.setdefault("PTB_TIMEDELTA", "true")

from tests.fakes.lancelot_process import lancelot_run, run_env  # noqa: E402
from tests.fakes.llm import FakeOpenAI, Reply  # noqa: E402
from tests.fakes.processes import spawn  # noqa: E402
from tests.fakes.telegram import FakeTelegram  # noqa: E402

FIRST_CHAT = 50_000
TEXTS = ["/help", "/status", "what is on today"]  # cycled; --texts replaces them
TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process, all its threads."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


class Timed(list[Any]):
    """The fake's list of sent messages, stamped with the fake's clock as each arrives."""

    def __init__(self, clock: dict[int, deque[float]]) -> None:
        super().__init__()
        self.clock = clock

    def append(self, item: Any) -> None:
        self.clock[int(item["chat_id"])].append(time.perf_counter())
        super().append(item)


@dataclass
class Bot:
    name: str
    tg: FakeTelegram
    proc: asyncio.subprocess.Process | None = None
    replies: dict[int, deque[float]] = field(default_factory=lambda: defaultdict(deque))

    injected: int = 0

    def watch(self) -> None:
        self.tg._state.sent = Timed(self.replies)

    @property
    def sent(self) -> int:
        return len(self.tg._state.sent)

    async def send(self, batch: list[tuple[int, str]]) -> list[float]:
        """Inject the messages at once; wait for every reply; latencies in ms."""
        for chat, _ in batch:
            self.replies[chat].clear()
        made: dict[int, list[float]] = defaultdict(list)
        for chat, text in batch:
            self.tg.user_message(text, user_id=chat)
            made[chat].append(time.perf_counter())
        self.injected += len(batch)
        # Every chat its own count: a card that is not a reply (an alert) answers nothing.
        await self.tg.wait_for(
            lambda: all(len(self.replies[c]) >= len(ats) for c, ats in made.items()), timeout=300
        )
        return [
            (got - at) * 1000
            for chat, ats in made.items()
            for at, got in zip(ats, self.replies[chat], strict=False)
        ]


async def start_echo(tg: FakeTelegram, model_url: str | None = None) -> asyncio.subprocess.Process:
    extra = ["--model-url", model_url] if model_url else []
    return await asyncio.create_subprocess_exec(
        sys.executable, __file__, "--echo-bot", tg.base_url, tg.token, *extra, cwd=REPO,
        stdin=asyncio.subprocess.DEVNULL,
    )  # fmt: skip


async def start_lancelot(
    tg: FakeTelegram,
    model: FakeOpenAI,
    owners: str,
    home: Path,
    per_second: str | None,
    repo: Path | None = None,
) -> Any:
    """`lancelot run` from this checkout, or from `repo` (another one: its code, its shipped
    settings)."""
    env = run_env(
        home,
        tg,
        LANCELOT_LIMITS_RATE_PER_MINUTE="1000000",
        LANCELOT_SANDBOX_WARM_AT_START="false",
        FEATURE_LOCAL_MODEL="false",
        TELEGRAM_OWNER_ID=owners,
        OPENAI_API_KEY="sk-bench-not-real",
        OPENAI_BASE_URL=model.base_url,
    )
    if per_second is not None:
        env["LANCELOT_DELIVERY_GLOBAL_PER_SECOND"] = per_second
    if repo is None:
        return await lancelot_run(env)
    env["LANCELOT_CONFIG"] = str(repo / "config" / "lancelot.yaml")
    quiet = asyncio.subprocess.DEVNULL
    return await spawn(
        sys.executable, "-m", "bot.cli", "run", env=env, cwd=repo,
        stdin=quiet, stdout=quiet, stderr=quiet,
    )  # fmt: skip


@contextlib.asynccontextmanager
async def running(bot: Bot, start: Any) -> AsyncIterator[None]:
    bot.proc = await start
    try:
        await bot.tg.wait_for(lambda: bot.tg.is_polling, timeout=120)
        bot.watch()
        yield
    finally:
        if bot.proc.returncode is None:
            bot.proc.terminate()
            try:
                await asyncio.wait_for(bot.proc.wait(), 20)
            except TimeoutError:
                bot.proc.kill()


@dataclass
class Round:
    rate: float  # messages per second
    cpu_ms: float  # per message
    latencies: list[float]


async def measure(bot: Bot, batches: list[list[tuple[int, str]]]) -> Round:
    """Each batch injected at once after the previous one is answered."""
    assert bot.proc is not None
    count = sum(len(b) for b in batches)
    cpu, started = cpu_seconds(bot.proc.pid), time.perf_counter()
    latencies = [ms for batch in batches for ms in await bot.send(batch)]
    wall = time.perf_counter() - started
    return Round(count / wall, (cpu_seconds(bot.proc.pid) - cpu) * 1000 / count, latencies)


def shape_batches(shape: str, args: argparse.Namespace, r: int) -> list[list[tuple[int, str]]]:
    """The messages of one round of a shape; every round its own chats (fresh pacing)."""
    if shape == "sequential":
        chat = FIRST_CHAT + r
        return [[(chat, TEXTS[i % len(TEXTS)])] for i in range(args.sequential)]
    if shape == "burst":
        chat = FIRST_CHAT + 1000 + r
        return [[(chat, TEXTS[i % len(TEXTS)]) for i in range(args.burst)]]
    first = FIRST_CHAT + 2000 + r * args.chats
    return [
        [
            (first + c, TEXTS[(c + i) % len(TEXTS)])
            for i in range(args.per_chat)
            for c in range(args.chats)
        ]
    ]


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values) or [float("nan")]
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def report(shape: str, rounds: dict[str, list[Round]]) -> None:
    print(f"\n{shape}:")
    med: dict[str, dict[str, float]] = {}
    for name, runs in rounds.items():
        lat = [ms for run in runs for ms in run.latencies]
        med[name] = {
            "rate": statistics.median(r.rate for r in runs),
            "cpu": statistics.median(r.cpu_ms for r in runs),
            "p50": pct(lat, 50),
            "p99": pct(lat, 99),
        }
        m = med[name]
        print(f"  {name:9} {m['rate']:7.1f} msg/s  {m['cpu']:6.2f} CPU ms/msg  "
              f"p50 {m['p50']:7.2f} ms  p99 {m['p99']:7.2f} ms  (n={len(lat)})")  # fmt: skip
    lc = med["lancelot"]
    for base in (name for name in med if name != "lancelot"):
        e = med[base]
        print(f"  lancelot/{base}: throughput {lc['rate'] / e['rate']:.2f}x, "
              f"CPU per message {lc['cpu'] / e['cpu']:.2f}x, added p50 "
              f"{lc['p50'] - e['p50']:.2f} ms, added p99 {lc['p99'] - e['p99']:.2f} ms")  # fmt: skip


async def run(args: argparse.Namespace) -> None:
    shapes = args.shapes.split(",")
    spans = ((0, args.rounds + 1), (1000, args.rounds), (2000, args.chats * args.rounds))
    owners = ",".join(str(FIRST_CHAT + base + i) for base, n in spans for i in range(n))
    async with contextlib.AsyncExitStack() as stack:
        model = await stack.enter_async_context(FakeOpenAI())
        model.default = Reply(text=json.dumps({"response_to_user": "fake answer"}))
        bots = [
            Bot("echo", await stack.enter_async_context(FakeTelegram())),
            Bot("lancelot", await stack.enter_async_context(FakeTelegram())),
        ]
        if args.model_bot:
            bots.append(Bot("model-bot", await stack.enter_async_context(FakeTelegram())))
        if args.against:
            bots.append(Bot("before", await stack.enter_async_context(FakeTelegram())))
        home = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="lancelot-bench-")))
        await stack.enter_async_context(running(bots[0], start_echo(bots[0].tg)))
        if args.model_bot:
            bot = bots[2]
            await stack.enter_async_context(running(bot, start_echo(bot.tg, model.base_url)))
        await stack.enter_async_context(
            running(
                bots[1], start_lancelot(bots[1].tg, model, owners, home, args.global_per_second)
            )
        )
        if args.against:
            bot, other = bots[-1], Path(args.against)
            older = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="lancelot-old-")))
            per_second = args.global_per_second
            start = start_lancelot(bot.tg, model, owners, older, per_second, other)
            await stack.enter_async_context(running(bot, start))
        warm = FIRST_CHAT + args.rounds  # a chat no round uses
        for bot in bots:
            for text in TEXTS * 3:
                await bot.send([(warm, text)])
        load = os.getloadavg()
        for shape in shapes:
            rounds: dict[str, list[Round]] = {b.name: [] for b in bots}
            for r in range(args.rounds):
                for bot in bots if r % 2 == 0 else reversed(bots):
                    done = await measure(bot, shape_batches(shape, args, r))
                    rounds[bot.name].append(done)
                    if args.verbose:
                        print(f"  {shape} round {r + 1} {bot.name}: {done.rate:.1f} msg/s, "
                              f"p50 {pct(done.latencies, 50):.2f} ms")  # fmt: skip
                await asyncio.sleep(args.pause)
            report(shape, rounds)
        after = os.getloadavg()
        for bot in bots:
            extra = [m["plain_text"][:60] for m in bot.tg._state.sent[bot.injected :]]
            print(f"{bot.name}: {bot.sent} messages sent for {bot.injected} received", extra[:3])
            calls = Counter(call.method for call in bot.tg._state.calls)
            print(f"  Bot API calls: {dict(calls.most_common())}")
        if model.requests:
            sizes = [len(json.dumps(seen.body)) for seen in model.requests]
            print(f"model calls: {len(sizes)}, request body median {statistics.median(sizes):.0f}"
                  f" bytes (max {max(sizes)})")  # fmt: skip
        print(f"\nload average: {load[0]:.2f} at the start, {after[0]:.2f} at the end "
              f"({os.cpu_count()} CPUs)")  # fmt: skip


def echo_bot(base_url: str, token: str, model_url: str | None) -> None:
    """The baseline: a bare Application with an echoing MessageHandler, polling. With
    `model_url`, text that is not a command is answered by one model call through the openai
    SDK first (the bare bot a plain message to Lancelot should be compared with)."""
    from telegram import Update  # type: ignore[attr-defined]  # mypy sees this file as `telegram`
    from telegram.ext import Application, ContextTypes, MessageHandler, filters
    from telegram.request import HTTPXRequest

    model: Any = None
    if model_url:
        import openai

        model = openai.AsyncOpenAI(api_key="sk-bench-not-real", base_url=model_url)

    async def echo(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.effective_chat is not None
        assert update.effective_message is not None
        text = update.effective_message.text or ""
        if model is not None and not text.startswith("/"):
            answer = await model.chat.completions.create(
                model="gpt-bench", messages=[{"role": "user", "content": text}]
            )
            text = answer.choices[0].message.content or text
        await update.effective_chat.send_message(text)

    plain = {"verify": False}  # loopback
    app = (
        Application.builder()
        .token(token)
        .base_url(base_url)
        .request(HTTPXRequest(httpx_kwargs=plain))
        .get_updates_request(HTTPXRequest(httpx_kwargs=plain))
        .build()
    )
    app.add_handler(MessageHandler(filters.TEXT, echo))
    app.run_polling(poll_interval=0, timeout=10)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default="sequential,burst,many")
    parser.add_argument("--rounds", type=int, default=4, help="rounds per shape and bot")
    parser.add_argument("--sequential", type=int, default=20, help="messages per round")
    parser.add_argument("--burst", type=int, default=30, help="one chat's burst")
    parser.add_argument("--chats", type=int, default=100)
    parser.add_argument("--per-chat", type=int, default=3)
    parser.add_argument("--pause", type=float, default=1.0, help="seconds between rounds")
    parser.add_argument(
        "--global-per-second",
        help="Lancelot's global send pace (shipped: 30, Telegram's limit; 0: off, as the echo "
        "bot, to measure Lancelot's own cost)",
    )
    parser.add_argument("--verbose", action="store_true", help="figures of every round")
    parser.add_argument("--texts", help="the messages to cycle through, separated by |")
    parser.add_argument(
        "--model-bot",
        action="store_true",
        help="also measure a bare bot that answers plain text with one model call",
    )
    parser.add_argument(
        "--against",
        metavar="PATH",
        help="another checkout of Lancelot (`git archive <commit>` unpacked, say), measured in "
        "the same run as `before`: a change's effect on a loaded machine",
    )
    parser.add_argument("--echo-bot", nargs=2, metavar=("BASE_URL", "TOKEN"))
    parser.add_argument("--model-url", help=argparse.SUPPRESS)
    parsed = parser.parse_args()
    if parsed.texts:
        TEXTS[:] = parsed.texts.split("|")
    if parsed.against:
        parsed.against = str(Path(parsed.against).resolve())
        if not (Path(parsed.against) / "bot" / "cli.py").is_file():
            parser.error(f"--against {parsed.against}: no Lancelot checkout there (no bot/cli.py)")
    if parsed.echo_bot:
        base_url, token = parsed.echo_bot
        echo_bot(base_url, token, parsed.model_url)
    else:
        asyncio.run(run(parsed))
