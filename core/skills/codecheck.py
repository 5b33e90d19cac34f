"""A static check of marketplace skill code: imports from an allowlist, no dynamic escapes.

Skills run inside Lancelot's process, so this raises the bar for code from elsewhere; it is
not a sandbox (Python cannot be fully confined statically). Governance still decides every
action a skill asks for through its context.
"""

from __future__ import annotations

import ast

ALLOWED_IMPORTS = frozenset(
    {
        "__future__",
        "core.skills.api",
        "typing",
        "dataclasses",
        "enum",
        "json",
        "re",
        "math",
        "statistics",
        "decimal",
        "fractions",
        "datetime",
        "collections",
        "itertools",
        "functools",
        "string",
        "textwrap",
        "difflib",
        "html",
        "base64",
        "hashlib",
        "uuid",
    }
)
FORBIDDEN_NAMES = frozenset(
    {
        "__import__",
        "eval",
        "exec",
        "compile",
        "open",
        "globals",
        "locals",
        "vars",
        "getattr",
        "setattr",
        "delattr",
        "breakpoint",
        "input",
        "memoryview",
    }
)


def _import_problems(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    elif isinstance(node, ast.ImportFrom):
        if node.level:
            return [f"line {node.lineno}: relative imports are not allowed"]
        names = [node.module or ""]
    else:
        return []
    return [f"line {node.lineno}: imports {n}" for n in names if n not in ALLOWED_IMPORTS]


def _node_problems(node: ast.AST) -> list[str]:
    line = getattr(node, "lineno", 0)
    if isinstance(node, ast.Name) and node.id in FORBIDDEN_NAMES:
        return [f"line {line}: uses {node.id}"]
    if isinstance(node, ast.Name) and node.id.startswith("__") and node.id != "__name__":
        return [f"line {line}: uses {node.id}"]
    if isinstance(node, ast.Attribute) and node.attr.startswith("__"):
        return [f"line {line}: reaches into {node.attr}"]
    return _import_problems(node)


def code_problems(files: dict[str, bytes]) -> list[str]:
    """What in the package's Python files goes beyond what marketplace code may use."""
    problems: list[str] = []
    for path, data in sorted(files.items()):
        if not path.endswith(".py"):
            continue
        try:
            tree = ast.parse(data.decode("utf-8"), path)
        except (SyntaxError, UnicodeDecodeError) as exc:
            problems.append(f"{path}: does not parse: {exc}")
            continue
        problems += [f"{path}: {p}" for node in ast.walk(tree) for p in _node_problems(node)]
    return problems
