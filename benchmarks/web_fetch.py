"""web_fetch: what reading a page costs, and that the event loop never waits for it.

Through the real WebFetch provider against the local test site (tests/fakes/web_site.py):
a 2 MiB HTML page read to its byte limit, parsed (selectolax, in a thread), reduced to
12,000 characters of text and fenced; while it runs, a probe on the same loop sleeps 5 ms
again and again, and its lag is how much later than 5 ms it woke. The site runs on the same
loop, so the lag is an upper bound for the fetch's own share. Also: the text reduction alone
on that page, the refusal of a hostile page nested 40,000 deep (Lexbor would take seconds on
it), and fencing 12,000 characters (the sanitizer's check included).

Usage (from the repository root):

    python benchmarks/web_fetch.py
    python benchmarks/web_fetch.py --rounds 20
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.security.sanitizer import Sanitizer
from core.security.untrusted import fence
from core.tools.action import ToolAction
from core.tools.capability import CapabilityTokens
from core.tools.readable import TooDeep, readable
from core.tools.web_fetch import FetchLimits, WebFetch
from tests.fakes.web_site import FakeSite

PROBE = 0.005
PAGE = b"<html><body>" + b"<p>Tomatoes like warm soil and steady water.</p>\n" * 60_000


def pct(values: list[float], q: int) -> float:
    return (
        statistics.quantiles(values, n=100, method="inclusive")[q - 1]
        if len(values) > 1
        else values[0]
    )


async def probe(lags: list[float], stop: asyncio.Event) -> None:
    while not stop.is_set():
        start = time.perf_counter()
        await asyncio.sleep(PROBE)
        lags.append((time.perf_counter() - start - PROBE) * 1000)


async def fetches(rounds: int) -> tuple[list[float], list[float]]:
    """Wall time of each fetch (ms) and the probe's lags (ms) while they ran."""
    tokens = CapabilityTokens(b"benchmark")
    limits = FetchLimits.of(("*",), ("127.0.0.1",), 2 << 20, 12_000, 30.0)
    ops = WebFetch(tokens, limits, Sanitizer())
    walls: list[float] = []
    lags: list[float] = []
    async with FakeSite() as site:
        action = ToolAction("web.fetch", None, {"url": f"{site.url}/big-html"})
        stop = asyncio.Event()
        prober = asyncio.create_task(probe(lags, stop))
        for _ in range(rounds):
            start = time.perf_counter()
            result = await ops.run(action, tokens.issue(action.digest))
            walls.append((time.perf_counter() - start) * 1000)
            assert result.truncated
        stop.set()
        await prober
    return walls, lags


def timed(work: object, rounds: int) -> list[float]:
    out = []
    for _ in range(rounds):
        start = time.perf_counter()
        work()  # type: ignore[operator]
        out.append((time.perf_counter() - start) * 1000)
    return out


def refuse_deep() -> None:
    try:
        readable(b"<div>" * 40_000, "utf-8", 12_000)
    except TooDeep:
        return
    raise AssertionError("a page 40,000 deep was read")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    walls, lags = asyncio.run(fetches(args.rounds))
    text = readable(PAGE, "utf-8", 12_000).text
    rows = [
        ("web_fetch of a 2 MiB page (ms)", walls),
        ("  event-loop lag meanwhile (ms)", lags),
        (
            "readable() of that page (ms)",
            timed(lambda: readable(PAGE, "utf-8", 12_000), args.rounds),
        ),
        ("refusing a page nested 40,000 deep (ms)", timed(refuse_deep, args.rounds)),
        (
            "fencing 12,000 characters (ms)",
            timed(lambda: fence(text, "x", "web page", Sanitizer()), args.rounds),
        ),
    ]
    print(f"{'':44} {'p50':>8} {'p99':>8} {'max':>8}   (n)")
    for name, values in rows:
        print(
            f"{name:44} {pct(values, 50):8.1f} {pct(values, 99):8.1f} {max(values):8.1f}   ({len(values)})"
        )


if __name__ == "__main__":
    main()
