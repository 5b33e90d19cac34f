"""Crash safety of the approval flow: SIGKILL the real process at random points, restart,
finish the flow, and count approvals lost, actions run twice, and actions run unapproved.

Run: .venv/bin/python benchmarks/approval_crash.py [--runs 50]
Target (issue 4): 0 lost, 0 executed twice, 0 executed without approval.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start(home: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "LANCELOT_HOME": str(home), "LANCELOT_WEB_PORT": str(free_port())}
    lancelot = Path(sys.executable).with_name("lancelot")
    return subprocess.Popen(
        [str(lancelot), "chat"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
        bufsize=1,
    )


def wait_ready(proc: subprocess.Popen[str]) -> None:
    """Until the console says hello (everything before it is start-up)."""
    assert proc.stdout is not None
    for line in proc.stdout:
        if "Lancelot console" in line:
            return


def finish(proc: subprocess.Popen[str]) -> None:
    for pipe in (proc.stdin, proc.stdout):
        if pipe is not None:
            pipe.close()


def say(proc: subprocess.Popen[str], line: str) -> None:
    assert proc.stdin is not None
    try:
        proc.stdin.write(line + "\n")
        proc.stdin.flush()
    except (BrokenPipeError, ValueError):
        pass


def one_run(home: Path, i: int, rng: random.Random) -> None:
    (home / "workspace").mkdir(parents=True, exist_ok=True)
    (home / "workspace" / f"m{i}").write_text("x")
    proc = start(home)
    wait_ready(proc)
    say(proc, f"/run rm /workspace/m{i}")
    time.sleep(rng.uniform(0.0, 0.3))  # maybe before, maybe after the card
    say(proc, "1")  # Approve (the card's first button), if the card is there yet
    time.sleep(rng.uniform(0.0, 0.3))  # maybe mid-decision, maybe mid-execution
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    finish(proc)
    # Restart: whatever is still pending is approved from /approvals; then leave.
    proc = start(home)
    wait_ready(proc)
    say(proc, "/approvals")
    time.sleep(0.5)
    say(proc, "1")
    time.sleep(0.5)
    assert proc.stdin is not None
    proc.stdin.close()
    proc.wait(timeout=60)
    finish(proc)


def audit(home: Path, runs: int) -> dict[str, int]:
    state = sqlite3.connect(home / "state.db")
    approvals = {
        row[0]: row for row in state.execute("SELECT id, action, state, decided_by FROM approvals")
    }
    ledger = sqlite3.connect(home / "ledger.db")
    requested = [
        json.loads(r[0])["approval_id"]
        for r in ledger.execute(
            "SELECT outputs FROM receipts WHERE action_type = 'approval_requested'"
        )
    ]
    runs_by_approval: dict[str, int] = {}
    for (meta,) in ledger.execute("SELECT metadata FROM receipts WHERE action_type = 'tool_run'"):
        approval_id = json.loads(meta).get("approval_id")
        runs_by_approval[approval_id] = runs_by_approval.get(approval_id, 0) + 1
    lost = sum(1 for a in requested if a not in approvals)
    lost += sum(1 for a in approvals.values() if a[2] in ("pending", "approved"))
    twice = sum(1 for n in runs_by_approval.values() if n > 1)
    unapproved = sum(
        1 for a, n in runs_by_approval.items() if n and (a not in approvals or not approvals[a][3])
    )
    states: dict[str, int] = {}
    for row in approvals.values():
        states[row[2]] = states.get(row[2], 0) + 1
    files_left = sum(1 for i in range(runs) if (home / "workspace" / f"m{i}").exists())
    return {
        "runs": runs,
        "approvals": len(approvals),
        "lost": lost,
        "executed_twice": twice,
        "executed_without_approval": unapproved,
        "files_left": files_left,
        **states,
    }


def main(runs: int, seed: int) -> None:
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        for i in range(runs):
            one_run(home, i, rng)
        result = audit(home, runs)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    main(args.runs, args.seed)
