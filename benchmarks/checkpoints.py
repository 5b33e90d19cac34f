"""Signed checkpoints: their cost to batched appends, and verifying a big ledger against them.

Run: .venv/bin/python benchmarks/checkpoints.py [--count 100000] [--verify-count 1000000]
    [--tail 10000] [--verify-only]
Targets (issue 18): checkpointing costs <= 2 % of batched append throughput; verifying
1,000,000 receipts against their checkpoints takes <= 10 s. Issue 36: an incremental verify
of the last 10,000 receipts (after a full verify left its mark) takes <= 1 s.

Appends are measured in alternating rounds with and without a Checkpointer (the default
schedule: every 1,000 receipts, at most once a second), as receipts/s (wall) and CPU
microseconds per receipt (all threads: steadier than wall on a shared machine). On a busy
machine both vary by more than 2 %, so the cost of one checkpoint (sign, append, fsync) is
also timed alone: at most one a second, it bounds the share of the writer's time.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.ledger import batched, receipt
from core.receipts.checkpoints import CHECKPOINTS_FILE, Checkpointer, CheckpointLog
from core.receipts.evidence import Evidence
from core.receipts.incremental import MARK_FILE, verify_since_mark, write_mark
from core.receipts.ledger import SqliteLedger
from core.receipts.signing import CheckpointSigner
from core.receipts.verify import ENDS, verify_ledger


def checkpointer(home: Path, every: int = 1000) -> Checkpointer:
    return Checkpointer(
        CheckpointSigner.load_or_create(home),
        CheckpointLog(home / CHECKPOINTS_FILE),
        every_receipts=every,
    )


async def append_rounds(count: int, rounds: int) -> dict[str, list[tuple[float, float]]]:
    """(receipts/s, CPU µs/receipt) per round, for each of "plain" and "signed"."""
    results: dict[str, list[tuple[float, float]]] = {"plain": [], "signed": []}
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("plain", "signed"):
            (Path(tmp) / name).mkdir()
        plain = SqliteLedger(Path(tmp) / "plain" / "ledger.db")
        signed_home = Path(tmp) / "signed"
        signed = SqliteLedger(signed_home / "ledger.db", checkpoints=checkpointer(signed_home))
        async with plain, signed:
            for ledger in (plain, signed):
                await batched(ledger, 20_000)  # warm-up
            for _ in range(rounds):
                results["plain"].append(await batched(plain, count))
                results["signed"].append(await batched(signed, count))
        lines = (signed_home / CHECKPOINTS_FILE).read_text().count("\n")
    print(f"checkpoints written while appending: {lines:,}")
    return results


async def one_checkpoint_cost(samples: int = 200) -> tuple[float, float]:
    """Wall and CPU milliseconds of one checkpoint: sign, append a line, fsync."""
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        signer = checkpointer(home)
        started, cpu = time.perf_counter(), time.process_time()
        for seq in range(1, samples + 1):
            signer.note(seq, f"{seq:064x}")  # one past the last: never due by count
            await signer.now()
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    return wall / samples * 1000, cpu / samples * 1000


async def build(path: Path, count: int, first: int = 0) -> None:
    async with SqliteLedger(path / "ledger.db", checkpoints=checkpointer(path)) as ledger:
        for i in range(first, first + count):
            ledger.append(receipt(i))
            if i % 1000 == 999:
                await asyncio.sleep(0)
            if i % 100_000 == 99_999:
                await ledger.flush()  # stay under the ledger's queue bound


def incremental(home: Path, count: int, tail: int) -> None:
    """`tail` more receipts after the full verify's mark, then the incremental verify."""
    asyncio.run(build(home, tail, first=count))
    load = os.getloadavg()[0]
    started = time.perf_counter()
    found = verify_since_mark(home / "ledger.db", Evidence.of_home(home, every_receipts=1000))
    wall = time.perf_counter() - started
    assert found.report.ok, found.report.reason
    assert found.since is not None
    print(
        f"incremental verify: {found.report.checked:,} receipts after checkpoint"
        f" {found.since.fingerprint} of a {count + tail:,}-receipt ledger, against"
        f" {found.report.checkpoints:,} checkpoints, in {wall * 1000:.0f} ms (load average"
        f" {load:.1f})"
    )


def verify_big(count: int, tail: int, keep: Path | None = None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home = keep or Path(tmp)
        if keep is not None and (home / "ledger.db").exists():
            (home / MARK_FILE).unlink(missing_ok=True)  # the full verify below sets it again
            print(f"reusing the ledger in {home} (the incremental adds {tail:,} receipts)")
            count = int(sqlite3.connect(home / "ledger.db").execute(ENDS).fetchone()[1])
        else:
            home.mkdir(parents=True, exist_ok=True)
            started = time.perf_counter()
            asyncio.run(build(home, count))
            print(f"built a ledger of {count:,} receipts in {time.perf_counter() - started:.0f} s")
        evidence = Evidence.of_home(home, every_receipts=1000)
        load = os.getloadavg()[0]
        started, cpu = time.perf_counter(), time.process_time()
        spawned = resource.getrusage(resource.RUSAGE_CHILDREN)  # the span walkers, once reaped
        report = verify_ledger(home / "ledger.db", evidence)
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        assert report.ok, report.reason
        assert report.last_checkpoint is not None
        write_mark(home / MARK_FILE, report.last_checkpoint)
        incremental(home, count, tail)
    walkers = (after.ru_utime + after.ru_stime) - (spawned.ru_utime + spawned.ru_stime)
    print(
        f"verify: {report.checked:,} receipts against {report.checkpoints:,} checkpoints in "
        f"{wall:.1f} s ({os.cpu_count()} processes; this one's CPU {cpu:.1f} s, theirs "
        f"{walkers:.1f} s; load average {load:.1f} before, {os.getloadavg()[0]:.1f} after)"
    )
    # On a busy machine the wall time says more about the neighbours than about verify: the
    # CPU time split over the cores is what an otherwise idle machine of this kind would take.
    print(
        f"verify on an idle machine of {os.cpu_count()} cores: about {walkers / (os.cpu_count() or 1) + cpu:.1f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--verify-count", type=int, default=1_000_000)
    parser.add_argument("--tail", type=int, default=10_000, help="receipts for the incremental")
    parser.add_argument("--verify-only", action="store_true", help="skip the append rounds")
    parser.add_argument("--keep", type=Path, default=None,
                        help="build the big ledger here and keep it (reused when there)")  # fmt: skip
    args = parser.parse_args()
    if args.verify_only:
        verify_big(args.verify_count, args.tail, args.keep)
        return
    results = asyncio.run(append_rounds(args.count, args.rounds))
    rate = {k: statistics.median(r for r, _ in v) for k, v in results.items()}
    cpu = {k: statistics.median(c for _, c in v) for k, v in results.items()}
    print(
        f"batched appends, median of {args.rounds} rounds of {args.count:,}: "
        f"plain {rate['plain']:,.0f}/s, {cpu['plain']:.1f} µs CPU each; "
        f"signed {rate['signed']:,.0f}/s, {cpu['signed']:.1f} µs CPU each"
    )
    print(
        f"checkpoint cost: {(1 - rate['signed'] / rate['plain']) * 100:+.1f} % of throughput, "
        f"{(cpu['signed'] / cpu['plain'] - 1) * 100:+.1f} % CPU per receipt"
    )
    wall, cpu_ms = asyncio.run(one_checkpoint_cost())
    print(
        f"one checkpoint: {wall:.2f} ms wall (in a thread, beside the writer), {cpu_ms:.2f} ms"
        f" CPU; at most one a second: <= {wall / 10:.2f} % of the writer's time"
    )
    if args.verify_count:
        verify_big(args.verify_count, args.tail)


if __name__ == "__main__":
    main()
