"""Runs a file's mutants against its tests, each in a forked child of a warmed-up parent.

The parent imports the tests and all they import once; each child forgets the file under
test, every module that imports it (grimp's import graph says which) and the tests, and
imports those afresh: the file under test through a finder that serves the mutated text.
A first child runs the tests on the real file under a line tracer, to learn which tests
reach which lines; each mutant then runs only the tests that reach it (all of them when it
changes what runs at import), with -x. A mutant no test reaches survives without a run.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import json
import os
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import CodeType, FrameType, ModuleType
from typing import Any

import grimp

from tests.mutation.operators import Mutant

REPO = Path(__file__).resolve().parents[2]
PROJECT = ("core", "bot", "soul", "skills", "tests")
# The runner has imported anyio (through the SDKs) before pytest starts in the child, so
# anyio's pytest plugin cannot be rewritten: pytest's warning about it is no test failure.
PYTEST_ARGS = (
    "-x", "-q", "-p", "no:cacheprovider", "-W", "ignore::pytest.PytestAssertRewriteWarning",
)  # fmt: skip


@dataclass
class Reach:
    """Which tests ran which lines of the file; `at_import` are lines run outside any test."""

    by_test: dict[str, set[int]] = field(default_factory=dict)
    at_import: set[int] = field(default_factory=set)
    seconds: float = 0.0

    def tests_for(self, mutant: Mutant) -> list[str] | None:
        """The node ids that reach `mutant`; None when every test must run (import time)."""
        if mutant.lines & self.at_import:
            return None
        return sorted(t for t, lines in self.by_test.items() if mutant.lines & lines)


class _MutatedSource(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves `text` as the source of module `name` (its real path kept as __file__)."""

    def __init__(self, name: str, path: Path, text: bytes) -> None:
        self._name, self._path, self._text = name, path, text

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != self._name:
            return None
        return importlib.util.spec_from_file_location(fullname, self._path, loader=self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        code: CodeType = compile(self._text, str(self._path), "exec", dont_inherit=True)
        exec(code, module.__dict__)  # noqa: S102 (the file under test, mutated)


def module_name(path: str) -> str:
    """`core/security/tokens.py` -> `core.security.tokens`."""
    return path.removesuffix(".py").replace("/", ".")


def warm_up(tests: Sequence[str]) -> None:
    """Import the tests and what they import, once, in the parent."""
    os.chdir(REPO)
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    for test in ("tests/conftest.py", *tests):
        test_path = test.split("::")[0]
        if test_path.endswith(".py"):
            try:
                importlib.import_module(module_name(test_path))
            except Exception:  # noqa: S112 (warming is best effort; the child reports for real)
                continue


def stale_modules(path: str) -> frozenset[str]:
    """The modules a child must import afresh: the file, those that import it, the tests."""
    graph = grimp.build_graph(*PROJECT, cache_dir=None)
    target = module_name(path)
    loaded = {name for name in sys.modules if name.split(".")[0] == "tests"}
    tests = {name for name in loaded if not name.startswith("tests.mutation")}
    return frozenset({target, *graph.find_downstream_modules(target), *tests})


def _forget(modules: frozenset[str]) -> None:
    """Drop the modules, and their names from their packages: `from core.receipts import
    chain_start` takes the package's attribute when it is there, the old module."""
    for name in modules:
        sys.modules.pop(name, None)
        package, _, leaf = name.rpartition(".")
        parent = sys.modules.get(package)
        if parent is not None and getattr(parent, leaf, None) is not None:
            delattr(parent, leaf)


def _in_child(work: Callable[[], int], timeout: float, quiet: bool = True) -> int | None:
    """Run `work` in a forked child; its exit code, or None when it outlived `timeout`."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            if quiet:
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, 1)
                os.dup2(devnull, 2)
            code = work()
        finally:
            os._exit(code)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return None


def _pytest(args: Sequence[str], plugins: Sequence[object] = ()) -> int:
    import pytest

    return int(pytest.main([*PYTEST_ARGS, *args], plugins=list(plugins)))


class _Tracer:
    """A pytest plugin and a line tracer: which test runs which lines of one file."""

    def __init__(self, filename: str) -> None:
        self.filename = filename
        self.current: str | None = None
        self.by_test: dict[str, set[int]] = {}
        self.at_import: set[int] = set()

    def pytest_runtest_logstart(self, nodeid: str, location: object) -> None:
        self.current = nodeid
        # Python turns tracing off for good when a traced frame overflows the stack (a test
        # of cyclic data): armed again per test, the tests after such a one are still seen.
        sys.settrace(self.trace)

    def pytest_runtest_logfinish(self, nodeid: str, location: object) -> None:
        self.current = None

    def trace(self, frame: FrameType, event: str, arg: Any) -> Callable[..., Any] | None:
        if frame.f_code.co_filename != self.filename:
            return None
        self._hit(frame.f_lineno)
        return self._line

    def _line(self, frame: FrameType, event: str, arg: Any) -> Callable[..., Any] | None:
        if event == "line":
            self._hit(frame.f_lineno)
        return self._line

    def _hit(self, line: int) -> None:
        if self.current is None:
            self.at_import.add(line)
        else:
            self.by_test.setdefault(self.current, set()).add(line)


def measure_reach(path: str, tests: Sequence[str], stale: frozenset[str], timeout: float) -> Reach:
    """Run the tests on the real file under the tracer; raise if they do not pass."""
    with tempfile.TemporaryDirectory(prefix="lancelot-mutation-") as scratch:
        out, log = Path(scratch) / "reach.json", Path(scratch) / "log.txt"

        def work() -> int:
            sys.stdout = sys.stderr = log.open("w")
            _forget(stale)
            tracer = _Tracer(str(REPO / path))
            import threading

            threading.settrace(tracer.trace)
            sys.settrace(tracer.trace)
            code = _pytest(tests, [tracer])
            sys.settrace(None)
            lines = {t: sorted(s) for t, s in tracer.by_test.items()}
            out.write_text(json.dumps({"by_test": lines, "at_import": sorted(tracer.at_import)}))
            return code

        started = time.monotonic()
        code = _in_child(work, timeout, quiet=False)
        seconds = time.monotonic() - started
        if code != 0:
            tail = log.read_text()[-3000:] if log.exists() else ""
            raise SystemExit(f"{path}: its tests do not pass unmutated (exit {code}):\n{tail}")
        data = json.loads(out.read_text())
    return Reach({t: set(s) for t, s in data["by_test"].items()}, set(data["at_import"]), seconds)


def plain_run(path: str, tests: Sequence[str], stale: frozenset[str], timeout: float) -> float:
    """Run the tests on the real file, untraced; their seconds. Raise if they do not pass."""
    started = time.monotonic()
    code = _in_child(lambda: _pytest_fresh(tests, stale), timeout)
    if code != 0:
        raise SystemExit(f"{path}: its tests do not pass unmutated (exit {code})")
    return time.monotonic() - started


def _pytest_fresh(tests: Sequence[str], stale: frozenset[str]) -> int:
    _forget(stale)
    return _pytest(tests)


def killed(
    mutant: Mutant,
    path: str,
    source: bytes,
    tests: Sequence[str],
    stale: frozenset[str],
    timeout: float,
) -> str:
    """Run `tests` on the file with `mutant` applied: 'killed', 'timeout' or 'survived'."""
    finder = _MutatedSource(module_name(path), REPO / path, mutant.apply(source))

    def work() -> int:
        _forget(stale)
        sys.meta_path.insert(0, finder)
        return _pytest(tests)

    code = _in_child(work, timeout)
    if code is None:
        return "timeout"
    return "survived" if code == 0 else "killed"
