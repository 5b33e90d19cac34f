"""Before an apply changes anything: check every path is as the dry run saw it, copy the new
contents next to the workspace (hash-checked, on disk) and keep what will be lost.

Nothing here changes a path the effects name; `commit` does that, and only after all of this
succeeded.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from core.tools.effects.errors import EffectsError, StaleEffects
from core.tools.effects.files import BLOCK, BLOCKED, DIR_FLAGS, DirHandles, PathBlocked, hash_fd
from core.tools.effects.model import ABSENT, Effect, FileState
from core.tools.effects.objects import ObjectStore
from core.tools.effects.tree import remove_tree

STAGING_PREFIX = ".lancelot-staging-"


class ContentSource(Protocol):
    """Where the new content of a file effect comes from (an upper layer, the undo store).
    `linkable`: a staged file may share the source's inode instead of being a copy."""

    linkable: bool

    def open(self, effect: Effect) -> int:
        """A read-only fd on the content `effect.after` describes; the caller closes it."""
        ...


@dataclass(slots=True)
class Plan:
    """A checked, staged apply: what to do, where the staged files are, what was kept."""

    effects: tuple[Effect, ...]  # every effect, in path order
    todo: frozenset[str]  # paths still to change (the rest already are as wanted)
    staging: str  # directory under the workspace root holding the staged files
    staged: dict[str, tuple[str, int]] = field(default_factory=dict)  # path -> (name, inode)
    objects: dict[str, int] = field(default_factory=dict)  # sha256 -> size of what was kept


def _listing_needed(effect: Effect) -> bool:
    """Whether to read a folder's names: only a folder state that recorded them (one to be
    deleted, or one an undo makes again) is compared by them (FileState.matches)."""
    return any(s.kind == "dir" and s.sha256 is not None for s in (effect.before, effect.after))


def _parent(path: str) -> str:
    return path.rpartition("/")[0]


def check(
    handles: DirHandles, effects: Sequence[Effect], *, resume: bool = False
) -> tuple[set[str], list[str]]:
    """(paths to change, stale paths): a path is to change when it is as the effect's before
    state; stale otherwise. With `resume` (an undo finishing what a cut-short one began), a
    path already as its after state counts as done; without, it is stale too: a file the
    dry run deletes that is already gone, or stands there anew, was not what was approved."""
    todo: set[str] = set()
    stale: list[str] = []
    made_dirs = {e.path for e in effects if e.after.kind == "dir"}
    unlinked = {e.path for e in effects if e.after.kind == "dir" and e.before.kind == "symlink"}
    for effect in effects:
        now = _now(handles, effect, unlinked)
        if effect.before.matches(now) and _parent_ready(handles, effect.path, made_dirs):
            todo.add(effect.path)
        elif not (resume and effect.after.matches(now)):
            stale.append(effect.path)
    return todo, stale


def _now(handles: DirHandles, effect: Effect, unlinked: set[str]) -> FileState:
    """The path's state: nothing when it is under a symlink this same change replaces with a
    folder (the link is removed before anything is put there, and never followed)."""
    now = handles.state(effect.path, known=effect.before, listing=_listing_needed(effect))
    parts = effect.path.split("/")
    if now == BLOCKED and any("/".join(parts[:i]) in unlinked for i in range(1, len(parts))):
        return ABSENT
    return now


def _parent_ready(handles: DirHandles, path: str, made_dirs: set[str]) -> bool:
    parent = _parent(path)
    if path == "." or parent in made_dirs:
        return True
    try:
        handles.get(parent)
    except (FileNotFoundError, PathBlocked):
        return False
    return True


def prepare(
    root: Path,
    effects: Sequence[Effect],
    source: ContentSource,
    store: ObjectStore | None,
    *,
    resume: bool = False,
) -> Plan:
    """Check, stage and back up; StaleEffects names the paths that are not as expected
    (`resume`: see check). Blocking: call it in a thread."""
    with DirHandles(root) as handles:
        todo, stale = check(handles, effects, resume=resume)
        if stale:
            raise StaleEffects(stale)
        plan = Plan(tuple(effects), frozenset(todo), f"{STAGING_PREFIX}{secrets.token_hex(6)}")
        os.mkdir(plan.staging, 0o700, dir_fd=handles.get(""))
        try:
            _stage(root, plan, source)
            if store is not None:
                _keep(handles, plan, store)
        except BaseException:
            remove_tree(root / plan.staging)
            raise
    return plan


def _stage(root: Path, plan: Plan, source: ContentSource) -> None:
    staging = os.open(root / plan.staging, DIR_FLAGS)
    try:
        for number, effect in enumerate(plan.effects):
            if effect.path not in plan.todo or not _needs_content(effect):
                continue
            name = str(number)
            inode = _copy_in(staging, name, effect, source)
            plan.staged[effect.path] = (name, inode)
        _sync(staging)
    finally:
        os.close(staging)


def _needs_content(effect: Effect) -> bool:
    return effect.after.kind == "file" and effect.kind != "mode_changed"


def _copy_in(staging: int, name: str, effect: Effect, source: ContentSource) -> int:
    """Put the effect's new content in the staging directory (a link to the source when it
    allows, else a copy), checking its hash; the staged inode."""
    want = effect.after
    fd = source.open(effect)
    try:
        if not (source.linkable and _link(fd, staging, name)):
            _copy(fd, staging, name)
        out = os.open(name, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=staging)
        try:
            if hash_fd(out) != want.sha256:
                raise EffectsError(f"{effect.path}: the dry run's copy no longer matches its hash")
            os.fchmod(out, want.mode)
            if os.geteuid() == 0 and want.uid >= 0:
                os.fchown(out, want.uid, want.gid)
            return os.fstat(out).st_ino
        finally:
            os.close(out)
    finally:
        os.close(fd)


def _link(fd: int, staging: int, name: str) -> bool:
    try:
        os.link(f"/proc/self/fd/{fd}", name, dst_dir_fd=staging, follow_symlinks=True)
    except OSError:  # another filesystem, links not allowed, no /proc
        return False
    return True


def _copy(fd: int, staging: int, name: str) -> None:
    def opener(path: str, flags: int) -> int:
        return os.open(path, flags | os.O_NOFOLLOW, 0o600, dir_fd=staging)

    with open(name, "xb", opener=opener) as out:
        while block := os.read(fd, BLOCK):
            out.write(block)


def _keep(handles: DirHandles, plan: Plan, store: ObjectStore) -> None:
    """Back up every file the plan will overwrite or delete (its state re-read to be sure
    the backup is of exactly what was checked)."""
    for effect in plan.effects:
        if effect.path not in plan.todo or not effect.destroys or effect.before.kind != "file":
            continue
        sha = effect.before.sha256
        if sha is None or sha in plan.objects:
            continue
        plan.objects[sha] = effect.before.size
        if store.has(sha):
            continue
        now = handles.state(effect.path, known=effect.before)
        if not effect.before.matches(now):
            raise StaleEffects([effect.path])
        parent, _, name = effect.path.rpartition("/")
        store.keep(handles.get(parent), name, now)


def _sync(fd: int) -> None:
    """Flush the staged files to disk: one syncfs for the filesystem rather than an fsync per
    file (each fsync is a journal commit)."""
    import ctypes  # here: only a commit syncs, and an idle process makes none

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.syncfs(fd) == 0:
            return
    except (OSError, AttributeError):
        pass
    os.sync()


def abandon(root: Path, plan: Plan) -> None:
    """Drop a plan that will not be committed (its staged files)."""
    with contextlib.suppress(OSError):
        remove_tree(root / plan.staging)
