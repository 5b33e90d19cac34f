"""`python -m tests`: the whole check as CI runs it (lint, format, types, layers, tests)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

STEPS: tuple[tuple[str, list[str]], ...] = (
    ("ruff lint", [sys.executable, "-m", "ruff", "check", "."]),
    ("ruff format", [sys.executable, "-m", "ruff", "format", "--check", "."]),
    ("mypy", [sys.executable, "-m", "mypy"]),
    ("import layers", [str(Path(sys.executable).with_name("lint-imports"))]),
    ("pytest", [sys.executable, "-m", "pytest", *sys.argv[1:]]),
)


def main() -> int:
    """Run every step; stop at the first failure."""
    for name, command in STEPS:
        print(f"==> {name}", flush=True)
        code = subprocess.call(command)
        if code != 0:
            print(f"==> {name} failed (exit {code})", flush=True)
            return code
    return 0


if __name__ == "__main__":
    sys.exit(main())
