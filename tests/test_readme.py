"""The README stays a short front page that keeps its two commands: one that sets up and runs
Lancelot, and the test command `.ci/run` reads from under `## Test it`."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
RUN = "python3.11 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/lancelot run"
TEST = (
    "python3.11 -m venv .venv && .venv/bin/pip install -e '.[dev,local]' "
    "&& .venv/bin/python -m tests"
)
MAX_WORDS = 1500  # the rest belongs in docs/


def first_sh_block(text: str, heading: str) -> str:
    """The first ```sh block after `heading`, as typed."""
    section = text.split(f"\n{heading}\n", 1)[1]
    found = re.search(r"```sh\n(.*?)```", section, re.S)
    assert found is not None, f"no sh block under {heading}"
    return found.group(1).strip()


def ci_test_command(readme: Path) -> str:
    """The command .ci/run extracts, by running its own awk line on `readme`."""
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    awk = re.search(r"test_command=\$\((awk .*) README\.md\)", ci)
    assert awk is not None, ".ci/run no longer reads the README with awk"
    done = subprocess.run(
        ["bash", "-c", f"{awk.group(1)} {readme}"], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_the_readme_sets_up_and_runs_lancelot_in_one_command() -> None:
    assert first_sh_block(README.read_text(encoding="utf-8"), "## Try it") == RUN


def test_ci_runs_the_readme_test_command() -> None:
    assert first_sh_block(README.read_text(encoding="utf-8"), "## Test it") == TEST
    assert ci_test_command(README) == TEST


def test_ci_finds_no_command_without_the_heading(tmp_path: Path) -> None:
    renamed = tmp_path / "README.md"
    renamed.write_text(README.read_text(encoding="utf-8").replace("## Test it", "## Testing"))
    assert ci_test_command(renamed) == ""


def test_the_readme_stays_short() -> None:
    assert len(README.read_text(encoding="utf-8").split()) <= MAX_WORDS
