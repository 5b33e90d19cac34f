"""An effect set in the owner's words: which files, what happens to them, how much."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

from core.tools.effects.model import Effect, FileState, GitChanges, RefChange

SHOWN = 20  # names listed per clause before "and N more": a card names what it touches
UNITS = ("B", "KB", "MB", "GB", "TB")


def size_text(size: int) -> str:
    """1536 -> "1.5 KB"; bytes below a kilobyte stay exact ("0 B", "3 B")."""
    value, unit = float(size), 0
    while value >= 1024 and unit < len(UNITS) - 1:
        value, unit = value / 1024, unit + 1
    return f"{size} B" if unit == 0 else f"{value:.1f} {UNITS[unit]}"


def shown(path: str) -> str:
    """A path as the owner may safely read it: bytes that are not UTF-8 as \\xNN, and
    control or direction characters escaped (a name must not break or fake a card's lines)."""
    text = path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return "".join(
        char.encode("unicode_escape").decode("ascii")
        if unicodedata.category(char) in ("Cc", "Cf")
        else char
        for char in text
    )


def _listed(items: Sequence[str]) -> str:
    shown = ", ".join(items[:SHOWN])
    return f"{shown} and {len(items) - SHOWN} more" if len(items) > SHOWN else shown


def _counted(verb: str, tops: Sequence[tuple[str, bool]]) -> str:
    """(name, is a folder) pairs told as "deletes 2 files and 1 folder: a.txt, b/, c.log"."""
    folders = sum(folder for _, folder in tops)
    counts = ((len(tops) - folders, "file"), (folders, "folder"))
    told = " and ".join(f"{n} {noun}{'s' if n != 1 else ''}" for n, noun in counts if n)
    return f"{verb} {told}: {_listed([name for name, _ in tops])}"


def _name(effect: Effect, state: FileState, inside: dict[str, int]) -> tuple[str, bool]:
    if state.kind != "dir":
        return effect.path, False
    count = inside.get(effect.path, 0)
    held = f" ({count} file{'s' if count != 1 else ''})" if count else ""
    return f"{effect.path}/{held}", True


def _tops(effects: Sequence[Effect], kind: str) -> list[tuple[str, bool]]:
    """The highest paths of one kind (a deleted directory stands for what it held), each
    with whether it is a folder."""
    chosen = [e for e in effects if e.kind == kind]
    paths = {e.path for e in chosen}
    inside: dict[str, int] = {}
    tops = []
    for effect in chosen:
        parts = effect.path.split("/")
        ancestors = ["/".join(parts[:i]) for i in range(1, len(parts))]
        if any(a in paths for a in ancestors):
            if "dir" not in (effect.before.kind, effect.after.kind):
                top = next(a for a in ancestors if a in paths)
                inside[top] = inside.get(top, 0) + 1
            continue
        tops.append(effect)
    return [_name(e, e.before if kind == "deleted" else e.after, inside) for e in tops]


def _file_clauses(effects: Sequence[Effect]) -> list[str]:
    clauses = []
    deleted = _tops(effects, "deleted")
    if deleted:
        clauses.append(_counted("deletes", deleted))
    changed = [
        f"{e.path} ({size_text(e.before.size)} → {size_text(e.after.size)})"
        for e in effects
        if e.kind == "modified" and e.after.kind == "file"
    ]
    if changed:
        clauses.append(f"overwrites {_listed(changed)}")
    replaced = [
        f"{e.path} ({_what(e.before)} → {_what(e.after)})" for e in effects if e.kind == "replaced"
    ]
    if replaced:
        clauses.append(f"replaces {_listed(replaced)}")
    created = [e for e in effects if e.after.kind != "symlink"]
    made = _tops(created, "created")
    if made:
        clauses.append(_counted("creates", made))
    links = [
        f"{e.path} → {e.after.target}"
        for e in effects
        if e.after.kind == "symlink" and e.kind in ("created", "modified")
    ]
    if links:
        clauses.append(f"makes symlink{'s' if len(links) > 1 else ''} {_listed(links)}")
    modes = [
        f"{'the workspace' if e.path == '.' else e.path} ({e.before.mode:o} → {e.after.mode:o})"
        for e in effects
        if e.kind == "mode_changed"
    ]
    if modes:
        clauses.append(f"changes permissions of {_listed(modes)}")
    return clauses


def _what(state: FileState) -> str:
    if state.kind == "symlink":
        return f"symlink to {state.target}"
    return {"dir": "directory", "file": f"file of {size_text(state.size)}"}.get(
        state.kind, state.kind
    )


def _ref_name(name: str) -> str:
    for prefix, label in (
        ("refs/heads/", "git branch "),
        ("refs/tags/", "git tag "),
        ("refs/remotes/", "git remote branch "),
    ):
        if name.startswith(prefix):
            return label + name.removeprefix(prefix)
    return f"git {name}" if name == "HEAD" else f"git ref {name.removeprefix('refs/')}"


def _value(value: str | None) -> str:
    if value is None:
        return "nothing"
    if value.startswith("ref: "):
        return value.removeprefix("ref: ").removeprefix("refs/heads/")
    return value[:7]


def _ref_clause(ref: RefChange, changes: GitChanges) -> str:
    name = _ref_name(ref.name)
    if ref.kind == "deleted":
        return f"deletes {name} (was {_value(ref.before)})"
    if ref.name in changes.broken:
        return f"points {name} at {_value(ref.after)}, not a commit git can find"
    if ref.kind == "created":
        return f"creates {name} (at {_value(ref.after)})"
    moved = f"moves {name} ({_value(ref.before)} → {_value(ref.after)})"
    return f"{moved}, leaving commits no ref reaches" if ref.name in changes.lost else moved


def _git_clauses(changes: GitChanges) -> list[str]:
    where = f" in {changes.repo}/" if changes.repo else ""
    refs = [_ref_clause(ref, changes) + where for ref in changes.refs]
    clauses = refs[:SHOWN]
    if len(refs) > SHOWN:
        clauses.append(f"and {len(refs) - SHOWN} more git ref changes{where}")
    if changes.index_changed:
        clauses.append(f"changes the git staging area{where}")
    if changes.objects_added:
        clauses.append(f"adds {changes.objects_added} git objects{where}")
    if changes.objects_removed:
        clauses.append(f"removes {changes.objects_removed} git objects{where}")
    if changes.config_changed:
        clauses.append(f"changes what git runs or obeys: {_listed(changes.config_changed)}")
    return clauses


def describe(effects: Sequence[Effect], git: Sequence[GitChanges]) -> str:
    """One line for a card: "deletes 2 files and 1 folder: a.txt, b/ (2 files), c.log;
    overwrites notes.md (2.1 KB → 0 B)". Changes inside .git are told through `git`, not
    file by file."""
    clauses = _file_clauses([e for e in effects if not e.in_git])
    for changes in git:
        clauses += _git_clauses(changes)
    return shown("; ".join(clauses)) if clauses else "changes nothing in the workspace"
