"""How many governance decisions Crusader mode changes: the issue's 20 actions (commands, tool
calls and dry runs' effect sets), each asked directly and as scheduled work, with the mode
off and on, through the policy engine under the shipped Soul. Also the time one decision
takes each way, to show the mode costs nothing.

Run: .venv/bin/python benchmarks/crusader.py [--rounds 2000]
Reference (issue 19): before, 0 of 40 decisions differed (T1 never needed approval).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.governance.policy import PolicyEngine, Verdict
from core.tools.capability import CapabilityTokens
from tests.core.governance.test_crusader import ACTIONS, SOUL, decide


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=2000)
    args = parser.parse_args()
    engines = {
        on: PolicyEngine(lambda: SOUL, CapabilityTokens(b"k" * 32), lambda on=on: on)
        for on in (False, True)
    }
    verdicts: dict[bool, dict[tuple[str, str], Verdict]] = {}
    for on, engine in engines.items():
        verdicts[on] = {
            (name, mode): decide(engine, what, mode == "scheduled").verdict
            for name, what in ACTIONS.items()
            for mode in ("direct", "scheduled")
        }
    differ = sorted(k for k in verdicts[False] if verdicts[False][k] is not verdicts[True][k])
    print(f"decisions: {len(verdicts[False])}, differing with Crusader on: {len(differ)}")
    for name, mode in differ:
        print(f"  {name} ({mode}): {verdicts[False][name, mode]} -> {verdicts[True][name, mode]}")
    for on, engine in engines.items():
        started = time.perf_counter()
        for _ in range(args.rounds):
            for what in ACTIONS.values():
                decide(engine, what, True)
        each = (time.perf_counter() - started) / (args.rounds * len(ACTIONS)) * 1e6
        print(f"one scheduled decision, Crusader {'on' if on else 'off'}: {each:.1f} µs")


if __name__ == "__main__":
    main()
