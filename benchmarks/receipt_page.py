"""Receipt viewer latency with a big ledger: fill it, serve the app, time the pages.

Usage (from the repository root):

    python benchmarks/receipt_page.py                      # 1,000,000 receipts in a temp dir
    python benchmarks/receipt_page.py --dir /tmp/bench     # keep (and reuse) the ledger
    python benchmarks/receipt_page.py --count 100000 --requests 100
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import statistics
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import aiohttp
from aiohttp import web

from bot.web import SESSION_COOKIE, build_web_app
from core.health.snapshot import HealthMonitor
from core.receipts import ReceiptQuery
from core.receipts.ledger import SqliteLedger
from core.receipts.model import Receipt, ReceiptStatus
from core.security.viewer_access import ViewerAccess
from core.state import open_state_db

# Registered kinds (core/receipts/registry.py), as a day's traffic writes them: every request
# starts with an `inbound` one (REQUEST_TYPE); the rest are its steps and the background.
REQUEST_TYPE = "inbound"
ACTION_TYPES = (
    "command",
    "reply",
    "agent_request",
    "context_compiled",
    "tool_call",
    "policy_decision",
    "tool_run",
    "dry_run",
    "approval_requested",
    "agent_reply",
    "delivery",
    "health_ok",
    "memory_edit_committed",
    "skill_run",
    "digest_sent",
)
STATUSES = tuple(ReceiptStatus)
STATUS_WEIGHTS = (85, 7, 3, 3, 2)  # success, failure, refused, pending, skipped
WORDS = (
    *("backup", "disk", "report", "weather", "invoice", "deploy", "branch", "commit"),
    *("calendar", "meeting", "email", "summary", "budget", "server", "restart", "docker"),
    *("image", "python", "test", "release", "note", "reminder", "garden", "travel"),
    *("flight", "hotel", "receipt", "photo", "music", "playlist", "recipe", "grocery"),
)
RARE_WORD = "zeppelin"  # in about one receipt in 20,000
RARE_TYPE = "rollback"  # about one receipt in 10,000
YIELD_EVERY = 5_000
FLUSH_EVERY = 100_000  # stay well under the ledger's backlog limit


def make_receipt(rng: random.Random, i: int, parents: list[str]) -> Receipt:
    """One plausible receipt; a few are of RARE_TYPE or mention RARE_WORD."""
    status = rng.choices(STATUSES, STATUS_WEIGHTS)[0]
    text = " ".join(rng.choices(WORDS, k=6))
    if i % 20_000 == 7:
        text += f" {RARE_WORD}"
    # Every 50th receipt is a request; 30 % of the others belong to one (its quest).
    request = i % 50 == 0
    parent = rng.choice(parents) if parents and not request and rng.random() < 0.3 else None
    return Receipt(
        action_type=REQUEST_TYPE
        if request
        else RARE_TYPE
        if i % 10_000 == 3
        else rng.choice(ACTION_TYPES),
        action_name=f"{rng.choice(WORDS)}-{i % 97}",
        inputs={"request": text, "n": i},
        outputs={"result": " ".join(rng.choices(WORDS, k=4))},
        status=status,
        duration_ms=round(rng.expovariate(1 / 200), 1),
        error_message=f"{rng.choice(WORDS)} failed" if status == ReceiptStatus.FAILURE else None,
        parent_id=parent,
        quest_id=parent,
        metadata={"i": i},
    )


async def fill(ledger: SqliteLedger, count: int) -> None:
    """Append receipts until the ledger holds `count`, then wait until they are searchable."""
    have = await ledger.count()
    if have >= count:
        print(f"reusing {have:,} receipts in {ledger.path}")
        return
    rng = random.Random(have)
    parents: list[str] = []
    started = time.perf_counter()
    for i in range(have, count):
        receipt = make_receipt(rng, i, parents)
        if i % 50 == 0:
            parents = [*parents[-99:], receipt.id]
        ledger.append(receipt)
        if i % YIELD_EVERY == 0:
            await asyncio.sleep(0)
        if i % FLUSH_EVERY == 0:
            await ledger.flush()
    await ledger.flush()
    committed = time.perf_counter() - started
    await ledger.flush_search()
    searchable = time.perf_counter() - started
    added = count - have
    print(
        f"filled {added:,} receipts: committed in {committed:.1f}s "
        f"({added / committed:,.0f}/s), searchable after {searchable:.1f}s; "
        f"dropped {ledger.dropped}"
    )


@asynccontextmanager
async def serve(app: web.Application) -> AsyncIterator[str]:
    """Serve the app on a free port of 127.0.0.1; yield its base URL."""
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    try:
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        host, port = runner.addresses[0][:2]
        yield f"http://{host}:{port}"
    finally:
        await runner.cleanup()


async def sign_in(http: aiohttp.ClientSession, base: str, access: ViewerAccess) -> str:
    """Spend a real one-time link and return the session cookie it gave."""
    async with http.get(f"{base}/receipts", params={"t": await access.issue_link()}) as resp:
        resp.raise_for_status()
        return resp.cookies[SESSION_COOKIE].value


async def timings(
    http: aiohttp.ClientSession, url: str, cookie: str, requests: int, budget: float = 60.0
) -> tuple[list[float], int]:
    """Milliseconds per request after one warm-up, until `requests` samples or `budget`
    seconds (at least two samples), and the body's size."""
    headers = {"Cookie": f"{SESSION_COOKIE}={cookie}"}
    size = 0
    samples: list[float] = []
    deadline = time.perf_counter() + budget
    for n in range(requests + 1):
        if len(samples) >= 2 and time.perf_counter() > deadline:
            break
        started = time.perf_counter()
        async with http.get(url, headers=headers) as resp:
            body = await resp.read()
            if resp.status != 200:
                raise RuntimeError(f"{url}: HTTP {resp.status}")
        if n >= 1:
            samples.append((time.perf_counter() - started) * 1000)
        size = len(body)
    return samples, size


async def append_in_bursts(ledger: SqliteLedger, per_second: int, every: float = 0.5) -> None:
    """Background write load: `per_second` receipts a second in bursts, until cancelled."""
    burst = max(1, int(per_second * every))
    rng = random.Random(42)
    i = await ledger.count()
    while True:
        for _ in range(burst):
            ledger.append(make_receipt(rng, i, []))
            i += 1
        await asyncio.sleep(every)


def percentile(samples: list[float], q: int) -> float:
    """The q-th percentile (nearest rank)."""
    return statistics.quantiles(samples, n=100, method="inclusive")[q - 1]


def report(name: str, samples: list[float], size: int) -> None:
    """One row of the table."""
    p50, p95 = percentile(samples, 50), percentile(samples, 95)
    row = f"{name:<32}{len(samples):>5}{p50:>10.1f}{p95:>10.1f}{max(samples):>10.1f}"
    print(f"{row}{size / 1024:>7.1f}")


async def detail_path(ledger: SqliteLedger) -> str:
    """A receipt that has children (from the middle of the fill), for the detail page."""
    middle = await ledger.page(ReceiptQuery(before_seq=await ledger.count() // 2, limit=100))
    parent = next((r.parent_id for r in middle.receipts if r.parent_id), None)
    return f"/receipts/{parent or 'none'}"


async def run(directory: Path, count: int, requests: int, write_rate: int) -> None:
    """Fill, serve, measure, print."""
    state = await open_state_db(directory / "state.db")
    try:
        async with SqliteLedger(directory / "ledger.db") as ledger:
            await fill(ledger, count)
            total = await ledger.count()
            started = time.perf_counter()
            types = await ledger.action_types()
            print(f"ledger.action_types(): {(time.perf_counter() - started) * 1000:.1f} ms")
            access = ViewerAccess(state, b"benchmark secret, 32 bytes long!")
            await access.setup()
            app = build_web_app(ledger=ledger, access=access, health=HealthMonitor())
            scenarios = {
                "first page (by request)": "/receipts",
                f"older requests before={total // 100}": f"/receipts?before={total // 100}",
                "first page, one by one": "/receipts?view=all",
                "type + status=failure": f"/receipts?type={types[0]}&status=failure",
                "rare type + status=failure": f"/receipts?type={RARE_TYPE}&status=failure",
                f"search q={WORDS[0]}": f"/receipts?q={WORDS[0]}",
                f"search q={WORDS[2][:4]}* (prefix)": f"/receipts?q={WORDS[2][:4]}*",
                f"search q={RARE_WORD} (rare)": f"/receipts?q={RARE_WORD}",
                "search two words": f"/receipts?q={WORDS[3]}+{WORDS[4]}",
                "search + type filter": f"/receipts?q={WORDS[1]}&type={types[1]}",
                "search + type + status=failure": (
                    f"/receipts?q={WORDS[1]}&type={types[1]}&status=failure"
                ),
                "search + rare type (bounded)": f"/receipts?q={WORDS[5]}&type={RARE_TYPE}",
                f"deep page before={total // 100}": f"/receipts?view=all&before={total // 100}",
                "deep filtered page": f"/receipts?type={types[2]}&before={total // 100}",
                "detail (with children)": await detail_path(ledger),
            }
            async with serve(app) as base, aiohttp.ClientSession() as http:
                cookie = await sign_in(http, base, access)
                print(f"\n{total:,} receipts, up to {requests} sequential requests or 60 s each\n")
                print(f"{'page':<32}{'n':>5}{'p50 ms':>10}{'p95 ms':>10}{'max ms':>10}{'KiB':>7}")
                for name, path in scenarios.items():
                    samples, size = await timings(http, base + path, cookie, requests)
                    report(name, samples, size)
                writer = asyncio.create_task(append_in_bursts(ledger, write_rate))
                try:
                    samples, size = await timings(http, base + "/receipts", cookie, requests)
                finally:
                    writer.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await writer
                report(f"first page, {write_rate:,} appends/s", samples, size)
    finally:
        await state.close()


def main() -> None:
    """Parse arguments and run in a temp dir unless --dir is given."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, help="keep the ledger here (reused if full)")
    parser.add_argument("--count", type=int, default=1_000_000)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--write-rate", type=int, default=200, help="appends/s in the last test")
    args = parser.parse_args()
    if args.dir:
        args.dir.mkdir(parents=True, exist_ok=True)
        asyncio.run(run(args.dir, args.count, args.requests, args.write_rate))
    else:
        with tempfile.TemporaryDirectory(prefix="receipt-bench-") as tmp:
            asyncio.run(run(Path(tmp), args.count, args.requests, args.write_rate))


if __name__ == "__main__":
    main()
