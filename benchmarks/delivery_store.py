"""What a message costs in state.db's delivery tables, many messages at once (issue 20, item 1).

Each message does what one owner message does there: its update is kept in the inbox, its
reply stored in the outbox, the reply's delivered mark written, the update marked done;
four writes, each awaited until it is on disk. --messages of them run at once (100 chats x
3 messages by default), --rounds times on a fresh state.db. Reported: messages/s and writes/s,
each write's latency (queued -> on disk) p50/p99, and, counted by strace when it is
installed, the fsyncs (fsync + fdatasync) per message.

It measures the code checked out: run it on an older checkout for the "before" figure
(before the group commit, the stores wrote through the shared connection, one statement
and one fsync each; the inbox's done marks were already batched).

    python benchmarks/delivery_store.py
    python benchmarks/delivery_store.py --messages 300 --rounds 5
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path[:] = [str(REPO), *(p for p in sys.path if Path(p or ".").resolve() != HERE)]

from core.delivery.inbox import UpdateInbox  # noqa: E402
from core.delivery.store import DeliveryKind, OutboxRow, OutboxStore  # noqa: E402
from core.events import Card, CardKind  # noqa: E402
from core.receipts.ledger import SqliteLedger  # noqa: E402
from core.state import open_state_db  # noqa: E402

try:
    from core.delivery.writer import StateWriter
except ImportError:  # a checkout from before the group commit
    StateWriter = None  # type: ignore[assignment,misc]

SYNCS = re.compile(r"^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?f(?:data)?sync\s*$", re.M)


async def stores(stack: AsyncExitStack, home: Path) -> tuple[OutboxStore, UpdateInbox]:
    """The outbox and inbox stores as the checked-out code builds them."""
    state = await open_state_db(home / "state.db")
    stack.push_async_callback(state.close)
    ledger = await stack.enter_async_context(SqliteLedger(home / "ledger.db"))
    if StateWriter is None:
        outbox, inbox = OutboxStore(state), UpdateInbox(state, ledger)  # type: ignore[call-arg,arg-type]
    else:
        writer = await stack.enter_async_context(StateWriter(home / "state.db"))
        outbox, inbox = OutboxStore(state, writer), UpdateInbox(state, writer, ledger)
    await outbox.setup()
    await inbox.setup()
    return outbox, inbox


async def timed(latencies: list[float], write: Awaitable[Any]) -> None:
    began = time.perf_counter()
    await write
    latencies.append(time.perf_counter() - began)


async def message(n: int, outbox: OutboxStore, inbox: UpdateInbox, latencies: list[float]) -> None:
    """One owner message's four writes, in the order the app makes them."""
    await timed(latencies, inbox.accept("telegram", [(n, f'{{"update_id":{n}}}')]))
    card = Card(CardKind.REPLY, f"Reply to /m{n}", correlation_id=f"card-{n}")
    row = OutboxRow(0, f"answer:telegram:{n}", "telegram", str(n % 100), DeliveryKind.SEND, card)
    await timed(latencies, outbox.add(row))
    await timed(latencies, outbox.part_delivered(row, str(n)))
    await timed(latencies, inbox.done("telegram", n))


async def one_round(messages: int) -> tuple[float, list[float]]:
    home = Path(tempfile.mkdtemp(prefix="lancelot-delivery-"))
    try:
        async with AsyncExitStack() as stack:
            outbox, inbox = await stores(stack, home)
            latencies: list[float] = []
            began = time.perf_counter()
            await asyncio.gather(*(message(n, outbox, inbox, latencies) for n in range(messages)))
            return time.perf_counter() - began, latencies
    finally:
        shutil.rmtree(home, ignore_errors=True)


def fsyncs_per_message(messages: int) -> tuple[int, float] | None:
    """The fsyncs of a round under strace, less those of a round of no message (opening the
    files syncs too), and that per message; None without strace."""
    if shutil.which("strace") is None:
        return None
    extra = syncs(messages) - syncs(0)
    return extra, extra / messages


def syncs(messages: int) -> int:
    with tempfile.NamedTemporaryFile(suffix=".strace") as out:
        command = ["strace", "-f", "-c", "-o", out.name, "-e", "trace=fsync,fdatasync"]
        command += [sys.executable, __file__, "--messages", str(messages), "--rounds", "1"]
        subprocess.run([*command, "--quiet"], check=True, cwd=REPO)
        return sum(int(calls) for calls in SYNCS.findall(Path(out.name).read_text()))


def ms(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


async def main(args: argparse.Namespace) -> None:
    rates, latencies = [], []
    for _ in range(args.rounds):
        took, lat = await one_round(args.messages)
        rates.append(args.messages / took)
        latencies += lat
    if args.quiet:
        return
    code = "group commit" if StateWriter is not None else "one commit per write"
    rate = statistics.median(rates)
    print(f"{code}: {args.messages} messages at once x {args.rounds} rounds, "
          f"load average {os.getloadavg()[0]:.2f}")  # fmt: skip
    print(f"  {rate:.0f} messages/s, {rate * 4:.0f} writes/s (median round); "
          f"write latency p50 {ms(latencies, 0.5):.1f} ms, p99 {ms(latencies, 0.99):.1f} ms")  # fmt: skip
    counted = fsyncs_per_message(args.messages)
    if counted is not None:
        print(f"  fsyncs (strace): {counted[0]} for the {args.messages} messages, "
              f"{counted[1]:.3f} per message")  # fmt: skip


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=300, help="messages at once")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quiet", action="store_true", help=argparse.SUPPRESS)
    asyncio.run(main(parser.parse_args()))
