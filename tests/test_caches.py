"""Every cache a long-running Lancelot keeps is bounded and named: docs/operations.md lists each
with the line of code that bounds it (the test fails when that line changes or goes), and no
function cache in the house is unbounded."""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "docs" / "operations.md"
SECTION = "## Memory over hours"
HOUSE = ("core", "bot", "soul", "skills")
# A row of the section's table: | `path` | `the bounding code` | what it holds | ...
ROW = re.compile(r"^\| `([\w/.]+\.py)` \| `([^`]+)` \|", re.MULTILINE)


def cache_rows() -> list[tuple[str, str]]:
    """(path, bounding code) for each cache the page lists."""
    text = PAGE.read_text()
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    return ROW.findall(text[start : end if end != -1 else None])


def test_the_page_lists_the_caches() -> None:
    rows = cache_rows()
    assert len(rows) >= 15
    assert len({path for path, _ in rows}) >= 15


def test_each_listed_bound_is_in_its_file() -> None:
    missing = [
        f"{path}: {code}"
        for path, code in cache_rows()
        if code not in (REPO / path).read_text(encoding="utf-8")
    ]
    assert missing == []


def _unbounded(tree: ast.AST) -> list[tuple[str, int]]:
    """Functions with parameters under @cache, @lru_cache or @lru_cache(maxsize=None)."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        takes = node.args.args or node.args.kwonlyargs or node.args.vararg or node.args.kwarg
        for decorator in node.decorator_list:
            if takes and _is_unbounded_cache(decorator):
                found.append((node.name, node.lineno))
    return found


def _is_unbounded_cache(decorator: ast.expr) -> bool:
    name = ast.unparse(decorator.func if isinstance(decorator, ast.Call) else decorator)
    if name.rsplit(".", 1)[-1] == "cache":
        return True
    if name.rsplit(".", 1)[-1] != "lru_cache":
        return False
    if not isinstance(decorator, ast.Call):
        return False  # @lru_cache: 128 entries
    size = next((k.value for k in decorator.keywords if k.arg == "maxsize"), None)
    if size is None and decorator.args:
        size = decorator.args[0]
    return isinstance(size, ast.Constant) and size.value is None


def test_no_function_cache_in_the_house_is_unbounded() -> None:
    offenders = [
        f"{path.relative_to(REPO)}:{line} {name}"
        for folder in HOUSE
        for path in sorted((REPO / folder).rglob("*.py"))
        for name, line in _unbounded(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert offenders == []


def test_an_unbounded_function_cache_is_found() -> None:
    for source in (
        "@functools.cache\ndef f(x): ...",
        "@lru_cache(maxsize=None)\ndef f(x): ...",
        "@functools.lru_cache(None)\ndef f(x): ...",
    ):
        assert _unbounded(ast.parse(source)) == [("f", 2)], source
    for source in (
        "@cache\ndef zones(): ...",  # no parameter: one value
        "@lru_cache(maxsize=64)\ndef f(x): ...",
        "@lru_cache\ndef f(x): ...",
    ):
        assert _unbounded(ast.parse(source)) == [], source
