"""`python -m tests.flakes -n 50 tests/bot/web/test_story_page.py ...`: run the chosen tests
N times, each run a fresh pytest process as CI starts it, and report every test that failed
or errored at least once (with how often), so a flake is found before CI finds it.

Exit 0 when every run passed, 1 when any test failed once, 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path


def failures(report: Path) -> list[str]:
    """The ids of the tests that failed or errored in one JUnit XML report."""
    if not report.exists():
        return ["<the run wrote no report: pytest itself failed>"]
    found = []
    for case in ET.parse(report).getroot().iter("testcase"):  # noqa: S314 (our own report)
        if case.find("failure") is not None or case.find("error") is not None:
            found.append(f"{case.get('classname', '')}::{case.get('name', '')}")
    return found


def run_once(paths: list[str], report: Path, extra: list[str]) -> tuple[int, list[str]]:
    """One pytest run over `paths`; its exit code and what failed in it."""
    report.unlink(missing_ok=True)
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
               f"--junitxml={report}", *extra, *paths]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    failed = failures(report) if done.returncode != 0 else []
    if done.returncode != 0 and not failed:
        failed = [f"<pytest exit {done.returncode}: {done.stdout.strip().splitlines()[-1:]}>"]
    return done.returncode, failed


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments, run, report."""
    parser = argparse.ArgumentParser(prog="python -m tests.flakes", description=__doc__)
    parser.add_argument("-n", "--runs", type=int, default=20, help="how many runs (20)")
    parser.add_argument("paths", nargs="+", help="test files, folders or node ids")
    parser.add_argument("--pytest", action="append", default=[], help="an argument for pytest")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    seen: Counter[str] = Counter()
    bad_runs = 0
    with tempfile.TemporaryDirectory(prefix="lancelot-flakes-") as scratch:
        report = Path(scratch) / "report.xml"
        for number in range(1, args.runs + 1):
            code, failed = run_once(args.paths, report, args.pytest)
            bad_runs += code != 0
            seen.update(failed)
            verdict = "ok" if code == 0 else f"FAILED: {', '.join(failed)}"
            print(f"run {number}/{args.runs}: {verdict}", flush=True)
    if not seen:
        print(f"all {args.runs} runs passed")
        return 0
    print(f"{bad_runs} of {args.runs} runs failed; tests that failed at least once:")
    for test, count in seen.most_common():
        print(f"  {count}/{args.runs}  {test}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
