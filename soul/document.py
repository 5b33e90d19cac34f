"""Turns soul YAML text into a `Soul`, reporting syntax and schema errors as located findings."""

from __future__ import annotations

import re
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import yaml
from pydantic import ValidationError

from soul.report import Finding, Severity
from soul.schema import Soul

try:  # libyaml is a hundred times faster; the pure-Python parser gives the same marks
    from yaml import CSafeLoader as _SafeLoader
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    from yaml import SafeLoader as _SafeLoader  # type: ignore[assignment]

Loc = tuple[int | str, ...]
MAX_TEXT = 256 * 1024  # a soul is a page or two; anything far bigger is a mistake or an attack


class _StrictLoader(_SafeLoader):
    """SafeLoader that refuses duplicate keys, which YAML would otherwise resolve silently."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Hashable, Any]:
        seen: set[object] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            if not isinstance(key, str | int | float | bool):
                continue
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


@dataclass(frozen=True)
class Reading:
    """The result of reading a soul text: the soul, or the findings that stopped it."""

    soul: Soul | None
    findings: tuple[Finding, ...] = ()
    root: yaml.Node | None = None

    def place(self, finding: Finding) -> Finding:
        """Fill in line and column for a finding that names only a key path."""
        if finding.line is not None or not finding.path or self.root is None:
            return finding
        loc = tuple(int(p[1:-1]) if p.startswith("[") else p for p in _PATH.findall(finding.path))
        node = _node_at(self.root, loc, want_key=False)
        return replace(finding, line=node.start_mark.line + 1, column=node.start_mark.column + 1)


_PATH = re.compile(r"\[\d+\]|[^.\[\]]+")


def read_soul(text: str) -> Reading:
    """Parse and validate; on failure return no soul and CRITICAL findings, never raise."""
    if len(text) > MAX_TEXT:
        message = f"the text is {len(text)} characters; a soul may have at most {MAX_TEXT}"
        return Reading(None, (Finding("too-large", Severity.CRITICAL, message),))
    try:
        root, data = _compose(text)
    except yaml.MarkedYAMLError as exc:
        return Reading(None, (_syntax_finding(exc),))
    except yaml.YAMLError as exc:
        return Reading(None, (Finding("yaml-syntax", Severity.CRITICAL, str(exc).splitlines()[0]),))
    if not isinstance(data, dict):
        found = "an empty document" if data is None else f"a {type(data).__name__}"
        message = f"a soul must be a mapping of keys, found {found}"
        return Reading(None, (Finding("schema", Severity.CRITICAL, message, line=1),), root)
    try:
        return Reading(Soul.model_validate(data), (), root)
    except ValidationError as exc:
        return Reading(None, tuple(_schema_finding(e, root) for e in exc.errors()), root)


def _compose(text: str) -> tuple[yaml.Node | None, object]:
    loader = _StrictLoader(text)
    try:
        node = loader.get_single_node()
        if node is not None:
            _refuse_aliases(node)
        data = loader.construct_document(node) if node is not None else None
    finally:
        loader.dispose()
    return node, data


def _refuse_aliases(root: yaml.Node) -> None:
    """Anchors and aliases are refused: a soul needs none, and they can multiply a small text
    into an enormous document (the "billion laughs")."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            raise yaml.composer.ComposerError(
                None, None, "anchors and aliases (&name, *name) are not allowed", node.start_mark
            )
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            stack.extend(part for pair in node.value for part in pair)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)


def _syntax_finding(exc: yaml.MarkedYAMLError) -> Finding:
    mark = exc.problem_mark or exc.context_mark
    problem = exc.problem or exc.context or "invalid YAML"
    check = "duplicate-key" if problem.startswith("duplicate key") else "yaml-syntax"
    line = mark.line + 1 if mark is not None else None
    column = mark.column + 1 if mark is not None else None
    return Finding(check, Severity.CRITICAL, problem, line=line, column=column)


def _schema_finding(error: Mapping[str, Any], root: yaml.Node | None) -> Finding:
    loc: Loc = tuple(error["loc"])
    kind = error["type"]
    if kind == "extra_forbidden":
        message = f"unknown key {loc[-1]!r}"
    elif kind == "missing":
        message = f"missing key {loc[-1]!r}"
    else:
        shown = repr(error["input"])
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        message = f"{error['msg']} (got {shown})"
    node = _node_at(root, loc, want_key=kind == "extra_forbidden") if root else None
    line = node.start_mark.line + 1 if node is not None else None
    column = node.start_mark.column + 1 if node is not None else None
    return Finding("schema", Severity.CRITICAL, message, _path(loc), line, column)


def _path(loc: Loc) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text or "(document)"


def _node_at(node: yaml.Node, loc: Loc, *, want_key: bool) -> yaml.Node:
    """The deepest node along `loc` (the key node itself when `want_key` and it exists)."""
    for depth, part in enumerate(loc):
        if isinstance(node, yaml.MappingNode):
            pair = next((kv for kv in node.value if kv[0].value == str(part)), None)
            if pair is None:
                return node
            last = depth == len(loc) - 1
            node = pair[0] if (want_key and last) else pair[1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            if part >= len(node.value):
                return node
            node = node.value[part]
        else:
            return node
    return node
