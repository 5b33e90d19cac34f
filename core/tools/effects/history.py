"""Which of a dry run's ref changes lose history: decided by what the refs point at before
and after, asked of git itself (core/tools/effects/gitobjects.py), never by how the command
was spelled.

A ref set to something that is not a commit (a branch or HEAD holding anything but a commit
id, a tag that peels to none, a symbolic ref to a branch that does not exist) is `broken`;
a ref moved so that the commit it held is no longer reachable from any ref is `lost` (a reset
back, a forced update, a rewritten ref file). A fast-forward loses nothing. A repository
whose objects cannot be read safely has every ref it changes counted as broken: what cannot
be checked is asked.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from core.tools.effects.git import Read, loose_ref, packed_refs
from core.tools.effects.gitobjects import OID, ObjectReader, Unreadable, object_store
from core.tools.effects.model import GitChanges, RefChange

MAX_REFS = 100_000
MAX_LINKS = 5  # refs git reads to resolve one, the ref itself first (its SYMREF_MAXDEPTH)
PEEL = "^{commit}"


def judge_history(
    repos: Sequence[GitChanges], lower: Path, upper: Path, before: Read
) -> tuple[GitChanges, ...]:
    """Each repository's changes with `lost` and `broken` filled in. `lower` is the
    workspace, `upper` the dry run's upper layer, `before` reads a workspace file as it was.
    Blocking (git runs): call it in a thread."""
    return tuple(_judged(changes, lower, upper, before) for changes in repos)


def _judged(changes: GitChanges, lower: Path, upper: Path, before: Read) -> GitChanges:
    kept = [ref for ref in changes.refs if ref.after is not None]
    if not kept:
        return changes
    gitdir = f"{changes.repo}/.git" if changes.repo else ".git"
    try:
        was = _refs_before(lower, gitdir, before)
        now = _refs_after(was, changes.refs)
        stores = [s for s in (object_store(upper, gitdir), object_store(lower, gitdir)) if s]
        shallow = before(f"{gitdir}/shallow")
        with ObjectReader(stores, shallow) as objects:
            broken = _broken(kept, now, objects)
            lost = _lost(kept, was, now, objects)
    except Unreadable:
        broken, lost = [ref.name for ref in kept], []
    return replace(changes, lost=tuple(lost), broken=tuple(broken))


def _refs_before(lower: Path, gitdir: str, before: Read) -> dict[str, str]:
    """Every ref the repository had: packed, loose (which win) and HEAD."""
    refs = packed_refs(before(f"{gitdir}/packed-refs"))
    top = lower / gitdir / "refs"
    count = 0
    for folder, _, files in os.walk(top):  # symlinked folders are listed, never entered
        for name in files:
            count += 1
            if count > MAX_REFS:
                raise Unreadable(f"{gitdir} has more than {MAX_REFS:,} refs")
            path = os.path.relpath(os.path.join(folder, name), lower)
            value = loose_ref(before(path))
            if value is not None:
                refs[path.removeprefix(f"{gitdir}/")] = value
    head = loose_ref(before(f"{gitdir}/HEAD"))
    if head is not None:
        refs["HEAD"] = head
    return refs


def _refs_after(was: Mapping[str, str], changed: Sequence[RefChange]) -> dict[str, str]:
    """The refs once the changes are applied."""
    now = dict(was)
    for ref in changed:
        if ref.after is None:
            now.pop(ref.name, None)
        else:
            now[ref.name] = ref.after
    return now


def _resolve(refs: Mapping[str, str], value: str | None) -> str | None:
    """The object id a ref value leads to through symbolic refs; None when it leads nowhere
    (or further than git follows: the ref holding `value` was the first of its reads)."""
    for _ in range(MAX_LINKS - 1):
        if value is None or not value.startswith("ref:"):
            break
        value = refs.get(value.removeprefix("ref:").strip())
    return value if value is not None and OID.fullmatch(value) else None


def _asked(name: str, oid: str) -> str:
    """What git is asked of a ref's object: a branch (or HEAD) must hold a commit itself;
    any other ref may hold a tag object that peels to one."""
    return oid if name == "HEAD" or name.startswith("refs/heads/") else oid + PEEL


def _broken(kept: Sequence[RefChange], now: Mapping[str, str], objects: ObjectReader) -> list[str]:
    """The refs that now point at something that is not a commit. A ref created symbolic to
    a branch yet to be born (the HEAD of a new repository) is how git starts, not a break."""
    targets = {ref.name: _resolve(now, ref.after) for ref in kept}
    found = objects.commits(_asked(name, oid) for name, oid in targets.items() if oid)
    broken = []
    for ref in kept:
        oid = targets[ref.name]
        if oid is not None and found[_asked(ref.name, oid)] is not None:
            continue
        unborn = ref.before is None and str(ref.after).startswith("ref: refs/heads/")
        if not unborn or oid is not None:
            broken.append(ref.name)
    return broken


def _lost(
    kept: Sequence[RefChange],
    was: Mapping[str, str],
    now: Mapping[str, str],
    objects: ObjectReader,
) -> list[str]:
    """The refs whose old commit no ref reaches any more."""
    olds = {ref.name: _resolve(was, ref.before) for ref in kept if ref.before is not None}
    old_commits = objects.commits(oid + PEEL for oid in olds.values() if oid)
    tip_ids = {oid for oid in (_resolve(now, value) for value in now.values()) if oid}
    tips = [c for c in objects.commits(oid + PEEL for oid in tip_ids).values() if c]
    lost = []
    for name, oid in olds.items():
        commit = old_commits.get(oid + PEEL) if oid else None
        if commit is not None and objects.unreachable(commit, tips):
            lost.append(name)
    return lost
