"""No import loops: neither between files nor between packages (type-only imports count).

import-linter holds the direction of the layers (pyproject.toml); this holds what a layers
contract cannot see: two modules of one package, or two wiring modules, importing each other.
"""

from __future__ import annotations

from collections import defaultdict

import grimp
import pytest

ROOTS = ("bot", "core", "soul", "skills")


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph(*ROOTS, include_external_packages=False, cache_dir=None)


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one member (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def module_edges(graph: grimp.ImportGraph) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = defaultdict(set)
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            # A package's __init__ re-exporting its own modules is not a loop between rooms.
            if not imported.startswith(module + "."):
                edges[module].add(imported)
    return edges


def room(module: str) -> str:
    """The package a module lives in, two levels deep (core.health.alerts -> core.health);
    a module at a root's top level is a room of its own (core.bus, bot.app)."""
    return ".".join(module.split(".")[:2])


def test_no_two_files_import_each_other(graph: grimp.ImportGraph) -> None:
    assert cycles(module_edges(graph)) == []


def test_no_two_packages_import_each_other(graph: grimp.ImportGraph) -> None:
    rooms: dict[str, set[str]] = defaultdict(set)
    for module, imported in module_edges(graph).items():
        for target in imported:
            if room(module) != room(target):
                rooms[room(module)].add(room(target))
    assert cycles(rooms) == []


def test_the_checker_finds_a_loop() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
