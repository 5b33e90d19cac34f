"""`python -m tests.mutation`'s pieces: the mutants it makes of a file and the list of
equivalent ones it reads."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.mutation import equivalent, runner
from tests.mutation.operators import mutants
from tests.mutation.targets import IN_A_CHILD, TARGETS

REPO = Path(__file__).resolve().parents[1]

SOURCE = b'''"""A module."""

LIMIT = 3


def allowed(count: int, name: str = "x") -> bool:
    """Docstrings are not mutated."""
    if count > LIMIT and name:
        raise ValueError("too many")
    return not name.startswith("_")
'''


def test_each_mutant_is_one_small_change_that_still_parses() -> None:
    found = {m.key.split(": ", 1)[1]: m for m in mutants("m.py", SOURCE)}
    assert "count > LIMIT -> count >= LIMIT" in found
    assert "count > LIMIT and name -> count > LIMIT or name" in found
    assert "raise ValueError('too many') -> pass" in found
    assert "not name.startswith('_') -> name.startswith('_')" in found
    assert "3 -> 4" in found
    assert not [k for k in found if "Docstrings" in k or "bool" in k]  # docstring, annotation
    for mutant in found.values():
        ast.parse(mutant.apply(SOURCE))
    flipped = found["count > LIMIT -> count >= LIMIT"].apply(SOURCE)
    assert b"    if (count >= LIMIT) and name:\n" in flipped
    assert flipped.replace(b"(count >= LIMIT)", b"count > LIMIT") == SOURCE


def test_a_mutant_is_named_by_its_function_not_its_line() -> None:
    keys = [m.key for m in mutants("m.py", SOURCE)]
    assert "m.py::allowed: return not name.startswith('_') -> return None" in keys
    moved = [m.key for m in mutants("m.py", SOURCE.replace(b"LIMIT = 3\n", b"\n\nLIMIT = 3\n"))]
    assert moved == keys


def test_an_equivalent_entry_needs_a_reason(tmp_path: Path) -> None:
    listed = tmp_path / "equivalent.txt"
    listed.write_text("# comment\n\nm.py::f: 2 -> 3 ==> layout only\n")
    assert equivalent.load(listed) == {"m.py::f: 2 -> 3": "layout only"}
    listed.write_text("m.py::f: 2 -> 3\n")
    with pytest.raises(equivalent.BadEntry, match=r"equivalent\.txt:1: expected"):
        equivalent.load(listed)


def test_the_checked_in_list_reads() -> None:
    assert all(reason for reason in equivalent.load().values())


def mutation(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tests.mutation", *args],
        cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


@pytest.mark.slow
def test_a_surviving_mutant_fails_the_run_unless_listed_as_equivalent(tmp_path: Path) -> None:
    only = ("core/security/owners.py", "--only", "OwnerStore._write: 2 -> 3")
    unlisted = tmp_path / "none.txt"
    unlisted.write_text("")
    done = mutation(*only, "--equivalent", str(unlisted))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "  survived: core/security/owners.py::OwnerStore._write: 2 -> 3\n" in done.stdout
    assert "1 non-equivalent mutants survived" in done.stdout
    done = mutation(*only)  # the checked-in list names it, with why
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-2].split()[1:5] == ["1", "0", "1", "0"]


@pytest.mark.slow
def test_a_mutant_the_tests_notice_is_killed() -> None:
    done = mutation("core/security/owners.py", "--only", "OwnerStore.get")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-2].split()[1:5] == ["1", "1", "0", "0"]
    assert done.stdout.splitlines()[-1] == "no mutant survived"
    assert "  1 mutants: each against all its tests, reach not measured\n" in done.stdout


@pytest.mark.slow
def test_more_than_a_few_mutants_run_only_against_the_tests_that_reach_them() -> None:
    only = ("OwnerStore.get", "OwnerStore.forget", "OwnerStore.save")  # 14 mutants
    done = mutation("core/security/owners.py", *(a for w in only for a in ("--only", w)))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "reach not measured" not in done.stdout
    assert done.stdout.splitlines()[-2].split()[1:5] == ["14", "14", "0", "0"]


def test_nothing_mapped_is_a_clear_error() -> None:
    done = mutation("core/nowhere")
    assert done.returncode == 2
    assert "nothing mapped under ['core/nowhere']; mapped: core/security/tokens.py" in done.stderr


def test_every_mapped_file_and_test_exists() -> None:
    # A renamed test file would otherwise make every mutant of its module "not reached".
    assert set(IN_A_CHILD) <= set(TARGETS)
    for path, tests in [*TARGETS.items(), *IN_A_CHILD.items()]:
        assert (REPO / path).is_file(), path
        for test in tests:
            file, _, name = test.partition("::")
            assert (REPO / file).is_file(), test
            assert not name or f"def {name}(" in (REPO / file).read_text(), test


DEEP = """
def down(n):
    return down(n + 1)


def touch():
    return 1
"""


def test_the_tracer_still_sees_tests_after_one_that_overflowed_the_stack(tmp_path: Path) -> None:
    # Python turns tracing off for good when a traced frame overflows the stack (a test of
    # cyclic data): the tests after it must still count as reaching the lines they run.
    path = tmp_path / "deep.py"
    path.write_text(DEEP)
    code = compile(DEEP, str(path), "exec")
    space: dict[str, Any] = {}
    exec(code, space)  # noqa: S102 (a module of our own, for the tracer to watch)
    tracer = runner._Tracer(str(path))
    previous = sys.gettrace()
    sys.settrace(tracer.trace)
    try:
        tracer.pytest_runtest_logstart("deep", None)
        with pytest.raises(RecursionError):
            space["down"](0)
        tracer.pytest_runtest_logfinish("deep", None)
        tracer.pytest_runtest_logstart("after", None)
        space["touch"]()
        tracer.pytest_runtest_logfinish("after", None)
    finally:
        sys.settrace(previous)
    assert 7 in tracer.by_test.get("after", set())  # the body of touch()
