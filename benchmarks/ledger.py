"""Ledger throughput (batched appends) and durable single-append latency.

Run: .venv/bin/python benchmarks/ledger.py [--count 100000]
Targets (issue 2): >= 20,000 receipts/s in batches; durable append p50 <= 2 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from core.receipts.ledger import SqliteLedger
from core.receipts.model import Receipt, ReceiptStatus


def receipt(i: int) -> Receipt:
    return Receipt(
        action_type=("command", "tool_run", "inbound", "reply")[i % 4],
        action_name=f"action{i % 50}",
        inputs={"text": f"run step {i} of the nightly job", "args": ["-v", str(i)]},
        outputs={"exit_code": i % 3, "stdout": "ok"},
        status=ReceiptStatus.FAILURE if i % 17 == 0 else ReceiptStatus.SUCCESS,
        duration_ms=1.5,
    )


async def batched(ledger: SqliteLedger, count: int) -> tuple[float, float]:
    """Receipts/s committed (wall clock) and CPU microseconds per receipt (all threads of the
    process, search indexing included: on a shared machine CPU cost is steadier than wall)."""
    started, cpu = time.perf_counter(), time.process_time()
    for i in range(count):
        ledger.append(receipt(i))
        if i % 1000 == 999:
            await asyncio.sleep(0)  # a real producer yields to the loop now and then
    await ledger.flush()
    wall = time.perf_counter() - started
    await ledger.flush_search()
    return count / wall, (time.process_time() - cpu) / count * 1e6


async def durable(ledger: SqliteLedger, count: int) -> list[float]:
    latencies = []
    for i in range(count):
        started = time.perf_counter()
        await ledger.append_durable(receipt(i))
        latencies.append((time.perf_counter() - started) * 1000)
    return latencies


async def main(count: int, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        async with SqliteLedger(Path(tmp) / "ledger.db") as ledger:
            await batched(ledger, 20_000)  # warm-up: heap, page cache, WAL
            runs = [await batched(ledger, count) for _ in range(rounds)]
            latencies = await durable(ledger, 500)
            await ledger.flush_search()
            report = await ledger.verify()
    latencies.sort()
    rates, cpus = [rate for rate, _ in runs], [cpu for _, cpu in runs]
    print(
        f"batched appends: {statistics.median(rates):,.0f} receipts/s "
        f"(median of {rounds} rounds of {count:,}; min {min(rates):,.0f}, max {max(rates):,.0f}); "
        f"CPU {statistics.median(cpus):.1f} µs/receipt"
    )
    print(
        f"durable append: p50 {latencies[len(latencies) // 2]:.2f} ms, "
        f"p99 {latencies[int(len(latencies) * 0.99)]:.2f} ms (synchronous=FULL, WAL)"
    )
    print(f"chain verified: {report.ok} over {report.checked:,} receipts")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    asyncio.run(main(args.count, args.rounds))
