"""The local model lane: intent classification latency, and the event loop while it generates.

1. Intent classification with the default model (the packaged Gemma 3 270M, or
   LANCELOT_LOCAL_MODEL): the real LocalProvider behind the real Router (receipts and usage
   included), a labelled set of owner messages, p50/p95 after a warm-up, and how many labels
   matched. Target (issue 6): p50 <= 150 ms on 2 cores.
2. The loop is not blocked: the real app (assemble) with the same model; while the local
   model generates long free text back to back, the owner sends /status through a channel
   every 20 ms and the time to its card is measured. Target: p99 <= 50 ms.

Usage (from the repository root):

    python benchmarks/llm.py
    python benchmarks/llm.py --rounds 5 --status 300
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.app import Lancelot, assemble
from core.config import load_settings
from core.events import Card, Inbound, MessageRef
from core.llm.intent import Intent, classify_intent, heuristic_intent
from core.llm.model_file import resolve_model
from core.llm.types import CompletionRequest, Lane, Message, Role

LABELLED = (
    ("Plan how to reorganise my photo folders by year", Intent.PLAN_REQUEST),
    ("Draft a strategy for cleaning up old branches", Intent.PLAN_REQUEST),
    ("Run the test suite in the workspace", Intent.EXEC_REQUEST),
    ("Create a file notes.md with today's date", Intent.EXEC_REQUEST),
    ("Rename report.txt to report-2026.txt", Intent.EXEC_REQUEST),
    ("Figure out a backup plan and then set it up", Intent.MIXED_REQUEST),
    ("What does HTTP 429 mean?", Intent.KNOWLEDGE_REQUEST),
    ("Why is the sky blue?", Intent.KNOWLEDGE_REQUEST),
    ("Explain what a hash chain is", Intent.KNOWLEDGE_REQUEST),
    ("Good morning!", Intent.CONVERSATIONAL),
    ("thanks a lot", Intent.CONVERSATIONAL),
    ("How are you today?", Intent.CONVERSATIONAL),
)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


class StatusPhone:
    """A minimal channel: resolves the waiting /status when its card arrives."""

    name = "bench"
    owner_chat_ids = ("chat",)

    def __init__(self) -> None:
        self.waiting: asyncio.Future[Card] | None = None
        self._n = 0

    async def deliver(self, chat_id: str, card: Card) -> MessageRef:
        self._n += 1
        if self.waiting is not None and not self.waiting.done():
            self.waiting.set_result(card)
        return MessageRef(self.name, chat_id, str(self._n))

    async def edit(self, ref: MessageRef, card: Card) -> None:
        return None

    async def typing(self, chat_id: str) -> None:
        return None


async def classification(home: Path, model: Path, rounds: int) -> None:
    env = {"LANCELOT_HOME": str(home), "LANCELOT_LOCAL_MODEL": str(model)}
    async with assemble(load_settings(environ=env), web=False) as app:
        router = app.models
        assert router is not None
        started = time.perf_counter()
        await classify_intent("hello", router)  # loads the model
        print(f"model load + first call: {(time.perf_counter() - started) * 1000:.0f} ms")
        for text, _ in LABELLED:  # warm-up: grammar cache, KV prefix
            await classify_intent(text, router)
        times: list[float] = []
        right = 0
        sources = set()
        for _ in range(rounds):
            for text, expected in LABELLED:
                t0 = time.perf_counter()
                result = await classify_intent(text, router)
                times.append((time.perf_counter() - t0) * 1000)
                right += result.intent is expected
                sources.add(result.source)
    n = len(times)
    keywords = sum(heuristic_intent(text) is expected for text, expected in LABELLED)
    print(
        f"intent classification ({model.name}, {n} calls, sources {sorted(sources)}): "
        f"p50 {statistics.median(times):.1f} ms, p95 {pct(times, 0.95):.1f} ms, "
        f"max {max(times):.1f} ms; labels matching the set: {right}/{n} "
        f"(the keyword fallback: {keywords}/{len(LABELLED)})"
    )


async def status_round_trips(app: Lancelot, phone: StatusPhone, count: int) -> list[float]:
    """Milliseconds from the owner's /status to its card, one every 20 ms."""
    latencies: list[float] = []
    for _ in range(count):
        phone.waiting = asyncio.get_running_loop().create_future()
        t0 = time.perf_counter()
        await app.bus.publish(Inbound(phone.name, "owner", "chat", "/status"))
        await asyncio.wait_for(phone.waiting, 10)
        latencies.append((time.perf_counter() - t0) * 1000)
        await asyncio.sleep(0.02)
    return latencies


async def loop_lag(stop: asyncio.Event) -> list[float]:
    """How late a 5 ms sleep wakes up, over and over: the loop's own responsiveness."""
    lags: list[float] = []
    while not stop.is_set():
        t0 = time.perf_counter()
        await asyncio.sleep(0.005)
        lags.append((time.perf_counter() - t0 - 0.005) * 1000)
    return lags


def summary(name: str, values: list[float]) -> str:
    return (
        f"{name}: p50 {statistics.median(values):.1f} ms, p99 {pct(values, 0.99):.1f} ms, "
        f"max {max(values):.1f} ms ({len(values)} samples)"
    )


async def loop_while_generating(home: Path, model: Path, count: int) -> None:
    env = {
        "LANCELOT_HOME": str(home),
        "LANCELOT_LOCAL_MODEL": str(model),
        "LANCELOT_LIMITS_RATE_PER_MINUTE": "100000",  # measure the loop, not the rate limit
    }
    async with assemble(load_settings(environ=env), web=False) as app:
        router = app.models
        assert router is not None
        phone = StatusPhone()
        await app.attach(phone)  # type: ignore[arg-type]
        long_text = CompletionRequest(
            messages=(Message(Role.USER, "Write a long story about a knight and a dragon."),),
            max_tokens=128,
            temperature=0.7,
        )
        await router.complete(long_text, task_type="bench", lane=Lane.LOCAL_UTILITY)  # load
        idle = await status_round_trips(app, phone, count)
        stop = asyncio.Event()
        generated = 0

        async def generate() -> None:
            nonlocal generated
            while not stop.is_set():
                await router.complete(long_text, task_type="bench", lane=Lane.LOCAL_UTILITY)
                generated += 1

        task = asyncio.create_task(generate())
        await asyncio.sleep(0.2)
        lag = asyncio.create_task(loop_lag(stop))
        busy = await status_round_trips(app, phone, count)
        stop.set()
        await task
        lags = await lag
        await classify_intent("hello", router)  # the label context's prompt cache
        t0 = time.perf_counter()
        await classify_intent("Run the test suite in the workspace", router)
        after = (time.perf_counter() - t0) * 1000
    print(summary("/status, model idle", idle))
    print(summary(f"/status while the local model generates ({generated} x 128 tokens)", busy))
    print(summary("event-loop lag (5 ms sleep) while it generates", lags))
    print(f"a classification right after free-text generation: {after:.1f} ms")


async def main(rounds: int, status: int) -> None:
    print(
        "load average before: {:.2f} {:.2f} {:.2f} on {} cores".format(
            *os.getloadavg(), os.cpu_count()
        )
    )
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        configured = os.environ.get("LANCELOT_LOCAL_MODEL")
        model = await asyncio.to_thread(
            resolve_model, Path(configured) if configured else None, home
        )
        await classification(home, model, rounds)
        await loop_while_generating(home, model, status)
    print("load average after: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))


if __name__ == "__main__":
    logging.basicConfig(level=logging.ERROR)
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--status", type=int, default=200)
    args = parser.parse_args()
    asyncio.run(main(args.rounds, args.status))
