"""The mutants of one Python file: each a small change to one expression or statement.

Built on the standard library's `ast`: a node's source span is replaced by the unparsed text
of a changed copy, so the rest of the file stays byte for byte as written. The operators are
the usual ones (mutmut's, PIT's): comparisons and boolean operators flipped, constants
changed, `not` dropped, arithmetic swapped, a returned or assigned value replaced by None,
a call or raise statement removed, an `if`/`while` condition forced. Docstrings,
annotations, decorators and f-string parts are left alone: changing them changes no
behaviour a test could see.
"""

from __future__ import annotations

import ast
import copy
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

SWAPPED_COMPARE: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Lt: ast.LtE, ast.LtE: ast.Lt,
    ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.In: ast.NotIn, ast.NotIn: ast.In,
    ast.Is: ast.IsNot, ast.IsNot: ast.Is,
}  # fmt: skip
SWAPPED_BINARY: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult,
    ast.FloorDiv: ast.Div, ast.Mod: ast.Div, ast.BitOr: ast.BitAnd, ast.BitAnd: ast.BitOr,
    ast.LShift: ast.RShift, ast.RShift: ast.LShift, ast.Pow: ast.Mult,
}  # fmt: skip
SHORT = 70


@dataclass(frozen=True)
class Mutant:
    """One change: bytes [start, end) of the file become `replacement`.

    `key` names it stably (file, enclosing function, before -> after, and #n when the same
    change occurs more than once there), so equivalent.txt survives edits elsewhere.
    `lines` are the source lines whose execution shows a test reached it.
    """

    key: str
    start: int
    end: int
    replacement: str
    lines: frozenset[int]

    def apply(self, source: bytes) -> bytes:
        """The file's text with this change made."""
        return source[: self.start] + self.replacement.encode() + source[self.end :]


@dataclass(frozen=True)
class _Change:
    node: ast.AST
    changed: ast.AST
    statement: ast.stmt
    scope: str


def mutants(path: str, source: bytes) -> list[Mutant]:
    """Every mutant of `source` (the file at repository path `path`), in file order."""
    tree = ast.parse(source)
    offsets = _line_offsets(source)
    seen: Counter[str] = Counter()
    found = []
    for change in _Walker(tree).changes():
        before, after = _text(change.node), _text(change.changed)
        base = f"{path}::{change.scope}: {_shorten(before)} -> {_shorten(after)}"
        seen[base] += 1
        key = base if seen[base] == 1 else f"{base} #{seen[base]}"
        start, end = _span(change.node, offsets)
        wrap = isinstance(change.node, ast.expr)
        found.append(Mutant(key, start, end, f"({after})" if wrap else after,
                            _reach(change.statement)))  # fmt: skip
    return found


def _line_offsets(source: bytes) -> list[int]:
    """Byte offset of the start of each line (1-based lines: index 0 is unused)."""
    offsets = [0, 0]
    for line in source.splitlines(keepends=True):
        offsets.append(offsets[-1] + len(line))
    return offsets


def _span(node: ast.AST, offsets: list[int]) -> tuple[int, int]:
    """The node's byte span (ast's column offsets count UTF-8 bytes)."""
    assert node.end_lineno is not None
    assert node.end_col_offset is not None
    return (offsets[node.lineno] + node.col_offset,
            offsets[node.end_lineno] + node.end_col_offset)  # fmt: skip


def _reach(statement: ast.stmt) -> frozenset[int]:
    """The lines that run when `statement` is reached: a compound statement's header only."""
    last = statement.end_lineno or statement.lineno
    body = getattr(statement, "body", None)
    if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
        last = max(statement.lineno, body[0].lineno - 1)
    return frozenset(range(statement.lineno, last + 1))


def _text(node: ast.AST) -> str:
    return " ".join(ast.unparse(node).split())


def _shorten(text: str) -> str:
    return text if len(text) <= SHORT else text[: SHORT - 3] + "..."


class _Walker:
    """Walks the tree keeping the enclosing scope and statement, and proposes changes."""

    def __init__(self, tree: ast.Module) -> None:
        self._tree = tree

    def changes(self) -> Iterator[_Change]:
        """Every change, in file order."""
        yield from self._body(self._tree.body, "<module>")

    def _body(self, body: list[ast.stmt], scope: str) -> Iterator[_Change]:
        for index, statement in enumerate(body):
            if index == 0 and _is_docstring(statement):
                continue
            yield from self._statement(statement, scope)

    def _statement(self, statement: ast.stmt, scope: str) -> Iterator[_Change]:
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            inner = statement.name if scope == "<module>" else f"{scope}.{statement.name}"
            yield from self._defaults(statement, scope)
            yield from self._body(statement.body, inner)
            return
        yield from _statement_changes(statement, scope)
        for name, value in ast.iter_fields(statement):
            if name == "annotation":
                continue
            yield from self._field(value, statement, scope)

    def _defaults(self, statement: ast.stmt, scope: str) -> Iterator[_Change]:
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
            for default in [*statement.args.defaults, *statement.args.kw_defaults]:
                if default is not None:
                    yield from self._expression(default, statement, scope)

    def _field(self, value: object, statement: ast.stmt, scope: str) -> Iterator[_Change]:
        items = value if isinstance(value, list) else [value]
        for item in items:
            if isinstance(item, ast.stmt):
                yield from self._statement(item, scope)
            elif isinstance(item, ast.expr):
                yield from self._expression(item, statement, scope)
            elif isinstance(item, ast.withitem):
                yield from self._expression(item.context_expr, statement, scope)
            elif isinstance(item, ast.excepthandler | ast.match_case):
                for name, inner in ast.iter_fields(item):
                    if name != "type":
                        yield from self._field(inner, statement, scope)

    def _expression(self, node: ast.expr, statement: ast.stmt, scope: str) -> Iterator[_Change]:
        if isinstance(node, ast.JoinedStr):
            return
        for changed in _expression_changes(node):
            yield _Change(node, changed, statement, scope)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                yield from self._expression(child, statement, scope)
            elif isinstance(child, ast.comprehension):
                for part in (child.iter, *child.ifs):
                    yield from self._expression(part, statement, scope)
            elif isinstance(child, ast.keyword):
                yield from self._expression(child.value, statement, scope)


def _is_docstring(statement: ast.stmt) -> bool:
    return (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
            and isinstance(statement.value.value, str))  # fmt: skip


def _statement_changes(statement: ast.stmt, scope: str) -> Iterator[_Change]:
    """Whole-statement changes: a call or raise removed, a value replaced by None, a
    condition forced, an augmented operator swapped, break and continue exchanged."""
    replaced: ast.stmt | None = None
    called = isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call | ast.Await)
    if called or isinstance(statement, ast.Raise):
        replaced = ast.Pass()
    elif isinstance(statement, ast.Return) and not _is_none(statement.value):
        replaced = ast.Return(value=ast.Constant(None), lineno=0)
    elif isinstance(statement, ast.Assign) and not _is_none(statement.value):
        replaced = ast.Assign(targets=statement.targets, value=ast.Constant(None), lineno=0)
    elif isinstance(statement, ast.AugAssign) and type(statement.op) in SWAPPED_BINARY:
        replaced = copy.copy(statement)
        replaced.op = SWAPPED_BINARY[type(statement.op)]()
    elif isinstance(statement, ast.Break):
        replaced = ast.Continue()
    elif isinstance(statement, ast.Continue):
        replaced = ast.Break()
    if replaced is not None:
        yield _Change(statement, replaced, statement, scope)
    if isinstance(statement, ast.If | ast.While) and not isinstance(statement.test, ast.Constant):
        for forced in (True, False):
            yield _Change(statement.test, ast.Constant(forced), statement, scope)


def _is_none(node: ast.expr | None) -> bool:
    return node is None or (isinstance(node, ast.Constant) and node.value is None)


def _expression_changes(node: ast.expr) -> Iterator[ast.expr]:
    """Changed copies of one expression node (its children are walked separately)."""
    if isinstance(node, ast.Compare):
        for index, op in enumerate(node.ops):
            if type(op) in SWAPPED_COMPARE:
                changed = copy.copy(node)
                changed.ops = [*node.ops]
                changed.ops[index] = SWAPPED_COMPARE[type(op)]()
                yield changed
    elif isinstance(node, ast.BoolOp):
        yield ast.BoolOp(op=ast.Or() if isinstance(node.op, ast.And) else ast.And(),
                         values=node.values)  # fmt: skip
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not | ast.USub):
        yield node.operand
    elif isinstance(node, ast.BinOp) and type(node.op) in SWAPPED_BINARY:
        yield ast.BinOp(left=node.left, op=SWAPPED_BINARY[type(node.op)](), right=node.right)
    elif isinstance(node, ast.Constant):
        yield from _constant_changes(node.value)


def _constant_changes(value: object) -> Iterator[ast.expr]:
    if isinstance(value, bool):
        yield ast.Constant(not value)
    elif isinstance(value, int | float):
        yield ast.Constant(value + 1)
    elif isinstance(value, str):
        yield ast.Constant(f"XX{value}XX")
    elif isinstance(value, bytes):
        yield ast.Constant(b"XX" + value + b"XX")
