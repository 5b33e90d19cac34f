"""Live progress and Stop on Telegram: edit rates of the progress message, and how soon Stop
takes effect, through python-telegram-bot and the fake Bot API with the production delivery
policy (the outbox's pacing on).

- edits: a 20-step task (20 list_files calls, the model thinking between them) shows one
  progress message; the fake Bot API records when it answered each editMessageText. Printed:
  the edits of the message (the claim: at most 25) and the shortest gap between two of them
  (the claim: never under 1 s). Run with quick steps (the model answers at once: coalescing
  matters) and slow ones (model 1.2 s, and each listing held 1.2 s by a delay in front of
  the real file provider: every change could be an edit, so the edit budget matters).
- stop: a task waiting on a slow tool (`tail -f /dev/null` in the sandbox: T0 by the Soul,
  so nothing to let finish; it would run until the sandbox's 30 s timeout); the owner taps
  Stop. Printed: from the tap (the update handed to the fake) to
  the stop taking effect (task_stopped's own measure, from the press reaching the task), to
  the progress message showing "Stopped", and to the final answer arriving at the fake.

Needs the Docker engine and the sandbox image (`lancelot sandbox build`).

Usage (from the repository root):

    python benchmarks/progress_stop.py
    python benchmarks/progress_stop.py --steps 20 --stops 10
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

# Run as a script, this folder would shadow the `telegram` package (benchmarks/telegram.py).
HERE = Path(__file__).resolve().parent
sys.path[:] = [str(HERE.parent), *(p for p in sys.path if Path(p or ".").resolve() != HERE)]

from bot.app import Lancelot, assemble  # noqa: E402
from bot.channels.telegram.setup import attach_telegram  # noqa: E402
from bot.pairing import OwnerBook  # noqa: E402
from core.agent.quest import AgentLimits  # noqa: E402
from core.config import Settings  # noqa: E402
from core.delivery.outbox import DeliveryPolicy  # noqa: E402
from core.llm.types import Completion, ModelRouter  # noqa: E402
from core.receipts.base import ReceiptQuery  # noqa: E402
from core.tools.action import ToolAction  # noqa: E402
from core.tools.base import CommandRunner, ToolResult  # noqa: E402
from tests.bot.channels.telegram.harness import TUNING, settings_for  # noqa: E402
from tests.fakes.scripted_model import ScriptedRouter, call, final  # noqa: E402
from tests.fakes.telegram import FakeTelegram, SentMessage  # noqa: E402

PRODUCTION = DeliveryPolicy()  # paced: a burst, then about one message a second per chat
ENV = {"LANCELOT_PROGRESS_AFTER_SECONDS": "0", "LANCELOT_SANDBOX_WARM_AT_START": "true"}


# Read-only and T0 by the shipped Soul (`sleep` is read-only too, but the Soul does not
# rate it, so it would count as a T2 change that a stop lets finish).
SLOW_TOOL = [call("run_command", command="tail -f /dev/null"), final("Waited.")]


def listings(steps: int) -> list[Completion]:
    return [call("list_files") for _ in range(steps)] + [final(f"Looked {steps} times.")]


class Delayed:
    """The real file provider, each run held `delay` seconds first (a slow tool)."""

    name = "delayed_file_ops"

    def __init__(self, real: CommandRunner, delay: float) -> None:
        self._real, self._delay = real, delay

    async def run(self, action: ToolAction, capability: str | None) -> ToolResult:
        await asyncio.sleep(self._delay)
        return await self._real.run(action, capability)


@contextlib.asynccontextmanager
async def running(settings: Settings, model: ModelRouter, turns: int) -> AsyncIterator[Lancelot]:
    """Lancelot on the fake Bot API, paced as in production, allowed `turns` model turns."""
    limits = AgentLimits(max_iterations=turns)
    async with assemble(settings, delivery=PRODUCTION, models=model, agent_limits=limits) as app:
        await attach_telegram(
            app,
            tuning=TUNING,
            owners=OwnerBook(app.settings, app.home, channels=list(app.channels)),
        )
        app.health.mark_ready()
        yield app


def progress_of(tg: FakeTelegram) -> SentMessage | None:
    return next(
        (m for m in tg.sent if m["text"].startswith(("<b>Working", "<b>Stop", "<b>Fin"))), None
    )


def titled(tg: FakeTelegram, title: str) -> SentMessage | None:
    return next((m for m in tg.sent if m["plain_text"].startswith(title)), None)


async def edits_run(steps: int, think: float, tool: float, home: Path) -> tuple[int, float, float]:
    """One task of `steps` tool calls; (edits of its message, shortest gap, wall seconds)."""
    async with FakeTelegram() as tg:
        model = ScriptedRouter(listings(steps), latency=think)
        settings = settings_for(tg, home, **ENV)
        async with running(settings, model, steps + 5) as app:
            if tool > 0:
                kit = app.governance
                assert kit is not None
                real = kit.tools.providers("file.list")[0].runner
                kit.tools.register(Delayed(real, tool), ["file.list"], priority=100, local=True)
            started = time.monotonic()
            tg.user_message("look around")
            await tg.wait_for(lambda: titled(tg, "Done") is not None, timeout=600)
            wall = time.monotonic() - started
            await tg.wait_for(
                lambda: (
                    (p := progress_of(tg)) is not None and p["plain_text"].startswith("Finished")
                ),
                timeout=30,
            )
        message = progress_of(tg)
        assert message is not None
        times = [
            c.at
            for c in tg.calls
            if c.method == "editMessageText" and c.params.get("message_id") == message["message_id"]
        ]
        gaps = [b - a for a, b in itertools.pairwise(times)]
        return len(times), min(gaps, default=float("inf")), wall


async def stop_run(home: Path) -> tuple[float, float, float, float]:
    """Tap Stop during a 30 s tool; seconds from the tap to: the stop taking effect (as the
    task measured it, plus the way to it), the Stopped message, the final answer."""
    async with FakeTelegram() as tg:
        model = ScriptedRouter(SLOW_TOOL, latency=0.05)
        settings = settings_for(tg, home, **ENV)
        async with running(settings, model, 12) as app:
            await asyncio.sleep(5)  # the sandbox's warm containers are made at start
            tg.user_message("wait on a slow tool")
            await tg.wait_for(
                lambda: (p := progress_of(tg)) is not None and "running" in p["plain_text"],
                timeout=180,
            )
            await asyncio.sleep(0.5)  # well inside the tool's wait
            message = progress_of(tg)
            assert message is not None
            assert message["reply_markup"] is not None
            stop = message["reply_markup"]["inline_keyboard"][0][0]["callback_data"]
            tapped, tapped_wall = time.monotonic(), time.time()
            tg.press_button(message["message_id"], stop)
            await tg.wait_for(lambda: titled(tg, "Stopped\n") is not None, timeout=30)
            answered = time.monotonic() - tapped
            await tg.wait_for(
                lambda: (
                    (p := progress_of(tg)) is not None and p["plain_text"].startswith("Stopped")
                ),
                timeout=30,
            )
            shown = time.monotonic() - tapped
            await app.ledger.flush()
            page = await app.ledger.page(ReceiptQuery(action_type="stop_requested"))
            asked_at = json.loads(page.receipts[0].metadata)["at"]
            page = await app.ledger.page(ReceiptQuery(action_type="task_stopped"))
            took = json.loads(page.receipts[0].metadata)["took_ms"] / 1000
        reached = asked_at - tapped_wall  # the tap reaching the task (stop_requested's time)
        return reached + took, took, shown, answered


def quantiles(values: list[float]) -> str:
    ordered = sorted(values)
    p50 = statistics.median(ordered)
    return f"p50 {p50 * 1000:.0f} ms, max {ordered[-1] * 1000:.0f} ms"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--stops", type=int, default=5)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for label, think, tool in (("quick steps", 0.05, 0), ("slow steps", 1.2, 1.2)):
            edits, gap, wall = await edits_run(args.steps, think, tool, root / label)
            print(
                f"{args.steps}-step task, {label} (model {think:g} s, tool {tool:g} s): "
                f"{edits} edits of its one progress message in {wall:.1f} s; "
                f"shortest gap between two edits {gap:.2f} s"
            )
        results = [await stop_run(root / f"stop{n}") for n in range(args.stops)]
    effect = [r[0] for r in results]
    inside = [r[1] for r in results]
    print(f"Stop during a 30 s read-only tool, {args.stops} taps:")
    print(f"  tap -> the stop takes effect (tool cancelled): {quantiles(effect)}")
    print(f"    of which inside the task, press received -> effective: {quantiles(inside)}")
    print(f"  tap -> progress message shows Stopped: {quantiles([r[2] for r in results])}")
    print(f"  tap -> final answer at the phone: {quantiles([r[3] for r in results])}")


if __name__ == "__main__":
    asyncio.run(main())
