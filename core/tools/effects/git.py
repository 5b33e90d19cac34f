"""A repository's changes told as git would: refs created, moved and deleted (loose or packed),
the index, objects, and the files git obeys (config, hooks) - not as raw object files."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from core.tools.effects.model import Effect, GitChanges, RefChange

Read = Callable[[str], bytes | None]

LOOSE_OBJECT = re.compile(r"objects/[0-9a-f]{2}/[0-9a-f]{38,62}")
PACK = re.compile(r"objects/pack/pack-[0-9a-f]+\.pack")
OBEYED = re.compile(r"config(\.worktree)?|hooks/.+|info/attributes|commondir|gitdir")
TOP_REFS = ("HEAD",)


def _split(path: str) -> tuple[str, str] | None:
    """(work tree, path inside .git) for a path in a repository's .git; None otherwise."""
    parts = path.split("/")
    if ".git" not in parts:
        return None
    at = parts.index(".git")
    return "/".join(parts[:at]), "/".join(parts[at + 1 :])


def packed_refs(data: bytes | None) -> dict[str, str]:
    """name -> id from a packed-refs file (peeled lines skipped)."""
    refs: dict[str, str] = {}
    for line in (data or b"").decode("utf-8", "replace").splitlines():
        if not line or line[0] in "#^":
            continue
        value, _, name = line.partition(" ")
        if name:
            refs[name.strip()] = value.strip()
    return refs


def loose_ref(data: bytes | None) -> str | None:
    """A loose ref file's value (an object id or "ref: <name>"), None when empty or absent."""
    if data is None:
        return None
    text = data[:4096].decode("utf-8", "replace").strip()
    return text or None


class _Repo:
    """The changes seen so far in one repository."""

    def __init__(self, repo: str) -> None:
        self.repo = repo
        self.refs: set[str] = set()
        self.packed_changed = False
        self.index_changed = False
        self.added = 0
        self.removed = 0
        self.obeyed: list[str] = []
        self.other = 0

    def note(self, inner: str, effect: Effect) -> None:
        is_file = "file" in (effect.before.kind, effect.after.kind)
        if inner == "packed-refs":
            self.packed_changed = True
        elif inner in TOP_REFS or inner.startswith("refs/"):
            if is_file:
                self.refs.add(inner)
        elif inner == "index":
            self.index_changed = True
        elif LOOSE_OBJECT.fullmatch(inner) or PACK.fullmatch(inner):
            self.added += effect.kind == "created"
            self.removed += effect.kind == "deleted"
        elif OBEYED.fullmatch(inner):
            self.obeyed.append(effect.path)
        elif is_file and not inner.startswith("objects/"):
            self.other += 1

    def changes(self, before: Read, after: Read) -> GitChanges:
        gitdir = f"{self.repo}/.git" if self.repo else ".git"
        packed_before = packed_refs(before(f"{gitdir}/packed-refs"))
        packed_after = (
            packed_refs(after(f"{gitdir}/packed-refs")) if self.packed_changed else packed_before
        )
        names = set(self.refs)
        if self.packed_changed:
            names |= {
                n
                for n in packed_before.keys() | packed_after.keys()
                if packed_before.get(n) != packed_after.get(n)
            }
        refs = []
        for name in sorted(names):
            old = loose_ref(before(f"{gitdir}/{name}")) or packed_before.get(name)
            new = loose_ref(after(f"{gitdir}/{name}")) or packed_after.get(name)
            if old != new:
                refs.append(RefChange(name, old, new))
        return GitChanges(
            repo=self.repo,
            refs=tuple(refs),
            index_changed=self.index_changed,
            objects_added=self.added,
            objects_removed=self.removed,
            config_changed=tuple(self.obeyed),
            other_files=self.other,
        )


def summarise_git(effects: Sequence[Effect], before: Read, after: Read) -> tuple[GitChanges, ...]:
    """One GitChanges per repository the effects touch inside .git. `before` and `after` read a
    workspace path's content before and after the effects (None when it is not a file)."""
    repos: dict[str, _Repo] = {}
    for effect in effects:
        where = _split(effect.path)
        if where is None:
            continue
        repo, inner = where
        if repo not in repos:
            repos[repo] = _Repo(repo)
        repos[repo].note(inner, effect)
    return tuple(repos[name].changes(before, after) for name in sorted(repos))
