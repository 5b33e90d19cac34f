"""`python -m tests.flakes` (docs/operations.md's way to find a flaky test): a test that fails in
one run of two is reported with how often; a steady file passes every run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

FLAKY = """
from pathlib import Path

def test_steady():
    assert True

def test_every_other_run():
    runs = Path(__file__).with_name("runs.txt")
    count = int(runs.read_text()) if runs.exists() else 0
    runs.write_text(str(count + 1))
    assert count % 2 == 0
"""


def flakes(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tests.flakes", *args],
        cwd=REPO, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def test_a_test_that_fails_once_is_named_with_how_often(tmp_path: Path) -> None:
    (tmp_path / "test_sometimes.py").write_text(FLAKY)
    done = flakes("-n", "3", "--pytest=--rootdir", f"--pytest={tmp_path}", str(tmp_path))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "run 1/3: ok" in done.stdout
    assert "run 2/3: FAILED: " in done.stdout
    assert "1 of 3 runs failed; tests that failed at least once:" in done.stdout
    assert "1/3  test_sometimes::test_every_other_run" in done.stdout
    assert "test_steady" not in done.stdout.split("at least once:")[1]


def test_steady_tests_pass_every_run(tmp_path: Path) -> None:
    (tmp_path / "test_steady.py").write_text("def test_fine():\n    assert 1 + 1 == 2\n")
    done = flakes("-n", "2", "--pytest=--rootdir", f"--pytest={tmp_path}", str(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().endswith("all 2 runs passed")
