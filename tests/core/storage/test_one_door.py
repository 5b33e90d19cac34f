"""Every SQLite file is opened through the storage engine (core/storage/): nothing else in
core/, bot/ or skills/ calls sqlite3.connect or aiosqlite.connect, under any name."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
SCANNED = ("core", "bot", "skills")
ENGINE = "core/storage/"
DRIVERS = ("sqlite3", "aiosqlite")


def connects(tree: ast.AST) -> Iterator[int]:
    """Lines that connect with a driver: `sqlite3.connect(...)`, an alias of the module or
    of its connect (`import sqlite3 as db`, `from aiosqlite import connect as c`)."""
    modules: set[str] = set()  # names bound to a driver module
    functions: set[str] = set()  # names bound to a driver's connect
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules.update(a.asname or a.name for a in node.names if a.name in DRIVERS)
        elif isinstance(node, ast.ImportFrom) and node.module in DRIVERS:
            functions.update(a.asname or a.name for a in node.names if a.name == "connect")
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        by_module = (
            isinstance(func, ast.Attribute)
            and func.attr == "connect"
            and isinstance(func.value, ast.Name)
            and func.value.id in modules
        )
        if by_module or (isinstance(func, ast.Name) and func.id in functions):
            yield node.lineno


def stray_connects(root: Path) -> list[str]:
    """`file:line` of each connect outside the engine."""
    found = []
    for package in SCANNED:
        for path in sorted((root / package).rglob("*.py")):
            name = path.relative_to(root).as_posix()
            if name.startswith(ENGINE):
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=name)
            found += [f"{name}:{line}" for line in connects(tree)]
    return found


def test_only_the_storage_engine_connects_to_a_database() -> None:
    strays = stray_connects(REPO)
    assert strays == [], "open it through core/storage/connections.py:\n" + "\n".join(strays)


def test_the_scan_sees_a_connect_under_any_name(tmp_path: Path) -> None:
    source = {
        "core/plain.py": "import sqlite3\nsqlite3.connect('x.db')\n",
        "core/aliased.py": "import aiosqlite as a\n\nasync def f():\n    await a.connect('x')\n",
        "bot/imported.py": "from sqlite3 import connect as c\nc('x.db')\n",
        "skills/s/fine.py": "import sqlite3\nsqlite3.Error\n",
        "core/storage/engine.py": "import sqlite3\nsqlite3.connect('x.db')\n",
    }
    for name, text in source.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)

    assert sorted(stray_connects(tmp_path)) == [
        "bot/imported.py:2",
        "core/aliased.py:4",
        "core/plain.py:2",
    ]
