"""`python -m tests.mutation core/security [...]`: mutation testing of the named files or
folders (those mapped in tests/mutation/targets.py), each against its own tests.

Prints every surviving mutant not listed in equivalent.txt, then per file the count of
mutants, killed, equivalent and survived; exits 1 when a non-equivalent mutant survives,
2 on bad arguments or tests that fail unmutated. `--list` prints the mutants without
running them; `--only WORD` keeps those whose name holds WORD (a dozen or fewer then run
against every mapped test, without first tracing which tests reach them).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from tests.mutation import equivalent, runner
from tests.mutation.operators import Mutant, mutants
from tests.mutation.targets import IN_A_CHILD, TARGETS, chosen

# With --only, up to this many mutants run against every mapped test instead of measuring
# which tests reach them first.
FEW = 12


def run_file(
    path: str, listed: dict[str, str], only: list[str]
) -> tuple[int, int, int, list[Mutant]]:
    """Mutate `path` (only the mutants whose key holds one of `only`, when given);
    (mutants, killed, equivalent, survivors not listed)."""
    tests = TARGETS[path]
    source = (runner.REPO / path).read_bytes()
    found = [m for m in mutants(path, source) if not only or any(w in m.key for w in only)]
    stale = runner.stale_modules(path)
    traced = not (only and len(found) <= FEW)
    if not traced:
        # A rerun of a few mutants: tracing which test reaches which line costs more than
        # running every mapped test against each of them (-x stops at the first failure).
        print(f"  {len(found)} mutants: each against all its tests, reach not measured")
        reach = runner.Reach(by_test={}, seconds=runner.plain_run(path, tests, stale, 900))
    else:
        reach = runner.measure_reach(path, tests, stale, timeout=900)
    timeout = 3 * reach.seconds + 10
    killed, equal, alive = 0, 0, []
    for mutant in found:
        selected = reach.tests_for(mutant) if traced else None
        if selected is not None and path in IN_A_CHILD:
            selected = sorted({*selected, *IN_A_CHILD[path]})
        if selected == []:
            outcome = "survived"
        else:
            outcome = runner.killed(mutant, path, source, selected or tests, stale, timeout)
        if outcome != "survived":
            killed += 1
        elif mutant.key in listed:
            equal += 1
        else:
            alive.append(mutant)
            reached = "not reached by any test" if selected == [] else "survived"
            print(f"  {reached}: {mutant.key}", flush=True)
    return len(found), killed, equal, alive


def main(argv: list[str]) -> int:
    """Run the named files' mutants; 1 when a non-equivalent one survives."""
    parser = argparse.ArgumentParser(prog="python -m tests.mutation", description=__doc__)
    parser.add_argument("names", nargs="+", help="files or folders, e.g. core/security")
    parser.add_argument("--list", action="store_true", help="print the mutants, run nothing")
    parser.add_argument(
        "--equivalent", type=Path, default=equivalent.FILE, metavar="FILE",
        help="the list of equivalent mutants (default: tests/mutation/equivalent.txt)",
    )  # fmt: skip
    parser.add_argument(
        "--only", action="append", default=[], metavar="WORD",
        help="run only the mutants whose name holds WORD (e.g. a function: on_press)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    paths = chosen(args.names)
    if not paths:
        print(f"nothing mapped under {args.names}; mapped: {', '.join(TARGETS)}", file=sys.stderr)
        return 2
    try:
        listed = equivalent.load(args.equivalent)
    except (equivalent.BadEntry, OSError) as exc:
        print(exc, file=sys.stderr)
        return 2
    if args.list:
        for path in paths:
            for mutant in mutants(path, (runner.REPO / path).read_bytes()):
                if not args.only or any(w in mutant.key for w in args.only):
                    print(mutant.key)
        return 0
    runner.warm_up([t for p in paths for t in TARGETS[p]])
    survivors = 0
    print(f"{'file':45} {'mutants':>7} {'killed':>7} {'equiv':>7} {'survived':>8}")
    for path in paths:
        started = time.monotonic()
        print(f"{path}:", flush=True)
        total, killed, equal, alive = run_file(path, listed, args.only)
        survivors += len(alive)
        print(f"{path:45} {total:7} {killed:7} {equal:7} {len(alive):8}"
              f"  ({time.monotonic() - started:.0f} s)", flush=True)  # fmt: skip
    print(f"{survivors} non-equivalent mutants survived" if survivors else "no mutant survived")
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
