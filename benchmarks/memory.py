"""Memory: the context compile, archival search, and what memory adds to an agent turn.

A memory.db with 100,000 archival facts (written through the API in commits of 1,000, with
their receipts), five core blocks, 1,000 task experiences, a task, and a 2,000-turn
conversation. The facts are sentences over a 20,000-word vocabulary with Zipf-distributed
word frequencies (so some words are in most facts, as in real text); requests mix common and
rare words. No model is called anywhere. Each figure is measured twice: as filled, and after
the daily cleanup (older turns summarised, full-text indexes merged), the state a home is in
most of the time. CPU time is printed beside wall time: on a busy machine it tells what the
work itself costs.

Run: .venv/bin/python benchmarks/memory.py [--items 100000] [--turns 2000] [--runs 300]
Targets (issue 16): context compile p95 <= 10 ms; archival search p95 <= 20 ms; memory adds
<= 5 ms p50 to a turn (the context compiled while the owner's words are recorded, then the
answer recorded and the task ended), measured the way the agent does it.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import random
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:] = [str(HERE.parent), *(p for p in sys.path if Path(p or ".").resolve() != HERE)]

from core.memory import Block, Memory, MemoryStore, Provenance  # noqa: E402
from core.receipts.ledger import SqliteLedger  # noqa: E402

SYLLABLE_TEXT = (
    "ka lo mi ne ru sa ti vo ze ba de fi gu ho ja ku le mo nu pa qui ro su ta ve wo xa yo zu"
)
SYLLABLES = SYLLABLE_TEXT.split()
CHAT = "owner-chat"
BUDGET = 4000  # tokens of context


def vocabulary(rng: random.Random, size: int = 20_000) -> list[str]:
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


class Text:
    """Sentences whose words follow a Zipf law over the vocabulary."""

    def __init__(self, rng: random.Random, words: list[str]) -> None:
        self.rng, self.words = rng, words
        self.cumulative = list(itertools.accumulate(1 / (rank + 1) for rank in range(len(words))))

    def sentence(self, low: int, high: int) -> str:
        k = self.rng.randint(low, high)
        picked = self.rng.choices(self.words, cum_weights=self.cumulative, k=k)
        return " ".join(picked).capitalize() + "."


async def fill(memory: Memory, text: Text, items: int, turns: int) -> None:
    started = time.perf_counter()
    for block in Block:
        await memory.set_block(block, text.sentence(40, 120), provenance=Provenance.SYSTEM)
    for start in range(0, items, 1000):
        async with memory.begin(Provenance.OWNER, "bulk facts") as edit:
            for _ in range(min(1000, items - start)):
                edit.insert(text.sentence(6, 25))
    print(f"  {items:,} archival facts in {time.perf_counter() - started:.1f} s", flush=True)
    started = time.perf_counter()
    for i in range(turns):
        role = "owner" if i % 2 == 0 else "agent"
        await memory.record_turn(CHAT, role, text.sentence(5, 40))
    for _ in range(1000):
        await memory.record_experience(
            text.sentence(5, 15), [text.sentence(3, 8)] * 3, [], ["tool_run"], "done", 900
        )
    await memory.set_task(CHAT, text.sentence(5, 15), plan=[text.sentence(3, 8)] * 4)
    print(f"  {turns:,} turns, 1,000 experiences in {time.perf_counter() - started:.1f} s")


async def timed(
    runs: int, call: Callable[[int], Awaitable[object]]
) -> tuple[list[float], list[float]]:
    """Wall and CPU milliseconds of each run (CPU: this process, its threads included; on a
    busy machine it says what the work itself costs)."""
    for i in range(10):  # warm the page cache and the code paths
        await call(i)
    wall, cpu = [], []
    for i in range(runs):
        start, used = time.perf_counter(), time.process_time()
        await call(i)
        wall.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - used) * 1000)
    return wall, cpu


def summary(name: str, times: tuple[list[float], list[float]], target: str) -> str:
    def p(ms: list[float], q: float) -> float:
        return sorted(ms)[min(len(ms) - 1, int(len(ms) * q))]

    wall, cpu = times
    return (
        f"{name}: p50 {p(wall, 0.5):.2f} ms, p95 {p(wall, 0.95):.2f} ms, max {max(wall):.2f} ms"
        f" (CPU p50 {p(cpu, 0.5):.2f}, p95 {p(cpu, 0.95):.2f}; {len(wall)} runs; target {target})"
    )


async def measure(items: int, turns: int, runs: int, keep: Path | None) -> None:
    rng = random.Random(16)
    text = Text(rng, vocabulary(rng))
    with tempfile.TemporaryDirectory() as tmp:
        home = keep or Path(tmp)
        async with SqliteLedger(home / "ledger.db") as ledger:
            if not (home / "memory.db").exists():
                async with MemoryStore(home / "memory.db") as store:
                    await fill(Memory(store, ledger), text, items, turns)
            started = time.perf_counter()
            async with MemoryStore(home / "memory.db") as store:
                opened = (time.perf_counter() - started) * 1000
                size = (home / "memory.db").stat().st_size / 1e6
                print(f"  reopened ({size:.0f} MB) in {opened:.0f} ms (with its integrity check)")
                memory = Memory(store, ledger)
                requests = [text.sentence(4, 14) for _ in range(runs + 10)]

                async def compile_context(i: int) -> object:
                    return await memory.context(CHAT, requests[i], BUDGET)

                async def search(i: int) -> object:
                    return await memory.recall(requests[i], limit=5)

                async def turn(i: int) -> object:
                    # As the agent does it (core/agent/memory_bridge.py): the context is
                    # read while the owner's words are recorded; the answer and the end of
                    # the task are one commit.
                    async with asyncio.TaskGroup() as both:
                        context = both.create_task(memory.context(CHAT, requests[i], BUDGET))
                        both.create_task(memory.record_turn(CHAT, "owner", requests[i]))
                    await memory.end_turn(CHAT, [("agent", "Done: " + requests[i])])
                    return context.result()

                for phase in ("as filled", "after the daily cleanup"):
                    if phase != "as filled":
                        report = await memory.cleanup(time.time())
                        print(f"  cleanup: {report.summarised_turns} turns summarised,"
                              " full-text indexes merged")  # fmt: skip
                    sample = await memory.context(CHAT, requests[0], BUDGET)
                    print(f"{phase}: a context of {len(sample.sections)} sections,"
                          f" {sample.tokens} tokens, {len(sample.item_ids)} ids")  # fmt: skip
                    print(
                        summary(
                            "  context compile", await timed(runs, compile_context), "p95 <= 10 ms"
                        )
                    )
                    print(summary("  archival search", await timed(runs, search), "p95 <= 20 ms"))
                    print(
                        summary(
                            "  turn (context beside the owner's turn, then the answer)",
                            await timed(runs, turn),
                            "p50 <= 5 ms",
                        )
                    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--turns", type=int, default=2_000)
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--keep", type=Path, help="a folder to keep memory.db in (and reuse)")
    args = parser.parse_args()
    print(f"memory benchmark: {args.items:,} archival facts, {args.turns:,}-turn conversation")
    started = time.process_time()
    sum(range(10**7))
    speed = (time.process_time() - started) * 1000
    print(
        f"  load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs;"
        f" sum(range(10**7)) took {speed:.0f} ms of CPU (a recent laptop: about 100)"
    )
    asyncio.run(measure(args.items, args.turns, args.runs, args.keep))


if __name__ == "__main__":
    main()
