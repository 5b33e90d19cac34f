"""`lancelot run` from start to /health/ready answering ready, and idle resident memory.

Run: .venv/bin/python benchmarks/startup.py [--runs 10]
Targets (issue 2): <= 1.5 s to ready without a local model; idle RSS <= 100 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def one_run(home: Path) -> tuple[float, float]:
    port = free_port()
    env = {**os.environ, "LANCELOT_HOME": str(home), "LANCELOT_WEB_PORT": str(port)}
    lancelot = Path(sys.executable).with_name("lancelot")
    started = time.perf_counter()
    proc = subprocess.Popen(
        [str(lancelot), "run"], stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env
    )
    try:
        while True:
            try:
                with urllib.request.urlopen(
                    f"http://127.0.0.1:{port}/health/ready", timeout=1
                ) as r:
                    if json.load(r)["ready"]:
                        break
            except OSError:
                time.sleep(0.005)
            if proc.poll() is not None:
                raise SystemExit(f"lancelot exited with {proc.returncode}")
        ready = time.perf_counter() - started
        time.sleep(3)  # idle
        return ready, rss_mb(proc.pid)
    finally:
        proc.terminate()
        proc.wait(30)


def main(runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        results = [one_run(Path(tmp) / "home") for _ in range(runs)]
    ready = sorted(r for r, _ in results)
    rss = [m for _, m in results]
    print(
        f"start -> ready: median {statistics.median(ready):.2f} s, max {ready[-1]:.2f} s "
        f"over {runs} runs (first run creates the databases: {results[0][0]:.2f} s)"
    )
    print(f"idle RSS: median {statistics.median(rss):.1f} MB, max {max(rss):.1f} MB")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    main(parser.parse_args().runs)
