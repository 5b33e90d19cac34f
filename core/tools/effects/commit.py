"""Committing a staged plan: each path changed atomically (a rename, an unlink, a mkdir),
through directory handles that never follow a symlink out of the workspace."""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

from core.tools.effects.files import BLOCKED, DIR_FLAGS, DirHandles, state_of
from core.tools.effects.model import ABSENT, Effect, FileState
from core.tools.effects.stage import Plan, abandon

O_PATH = getattr(os, "O_PATH", 0)


def commit(root: Path, plan: Plan) -> tuple[Effect, ...]:
    """Make every effect in `plan` true; the effects with their after states as written (what
    an undo checks against). Blocking: call it in a thread."""
    touched: set[str] = set()
    try:
        with DirHandles(root) as handles:
            staging = os.open(root / plan.staging, DIR_FLAGS)
            try:
                _remove_old(handles, plan, touched)
                for effect in plan.effects:
                    if effect.path in plan.todo:
                        _put(handles, staging, plan, effect)
                        touched.add(_parent(effect.path))
            finally:
                os.close(staging)
            _set_dir_modes(handles, plan)
            for directory in sorted(touched):
                with contextlib.suppress(OSError):
                    os.fsync(handles.get(directory))
            return tuple(_recorded(handles, plan, effect) for effect in plan.effects)
    finally:
        abandon(root, plan)


def _parent(path: str) -> str:
    return path.rpartition("/")[0] if path != "." else ""


def _split(handles: DirHandles, path: str) -> tuple[int, str]:
    parent, _, name = path.rpartition("/")
    return handles.get(parent), name


def _remove_old(handles: DirHandles, plan: Plan, touched: set[str]) -> None:
    """Delete what goes or is replaced by another kind, deepest paths first."""
    for effect in reversed(plan.effects):
        before, after = effect.before, effect.after
        if effect.path not in plan.todo or not before.exists:
            continue
        if after.exists and after.kind == before.kind:
            continue
        fd, name = _split(handles, effect.path)
        if before.kind == "dir":
            os.rmdir(name, dir_fd=fd)
            handles.forget(effect.path)
        else:
            os.unlink(name, dir_fd=fd)
        touched.add(_parent(effect.path))


def _put(handles: DirHandles, staging: int, plan: Plan, effect: Effect) -> None:
    """Create or update one path (directory modes come last, in _set_dir_modes)."""
    after = effect.after
    if after.kind == "absent" or effect.path == ".":
        return
    fd, name = _split(handles, effect.path)
    if after.kind == "dir":
        if effect.before.kind != "dir":
            os.mkdir(name, 0o700, dir_fd=fd)
            _own(fd, name, after)
    elif effect.path in plan.staged:
        staged, _ = plan.staged[effect.path]
        os.replace(staged, name, src_dir_fd=staging, dst_dir_fd=fd)
    elif after.kind == "file":
        _chmod(fd, name, after.mode)  # same content, new mode
    elif after.kind == "symlink":
        _symlink(fd, name, after)
    elif after.kind == "fifo":
        os.mkfifo(name, after.mode, dir_fd=fd)
        _own(fd, name, after)


def _symlink(fd: int, name: str, after: FileState) -> None:
    """A new symlink, or one pointed elsewhere by renaming a fresh one over it."""
    temp = f".{name[:200]}.{secrets.token_hex(4)}.lnk"
    os.symlink(after.target or "", temp, dir_fd=fd)
    try:
        _own(fd, temp, after)
        os.replace(temp, name, src_dir_fd=fd, dst_dir_fd=fd)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp, dir_fd=fd)
        raise


def _own(fd: int, name: str, state: FileState) -> None:
    if os.geteuid() == 0 and state.uid >= 0:
        os.chown(name, state.uid, state.gid, dir_fd=fd, follow_symlinks=False)


def _chmod(fd: int, name: str, mode: int) -> None:
    """chmod without following a symlink: through an O_PATH handle on the very inode."""
    handle = os.open(name, O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
    try:
        kind = stat.S_IFMT(os.fstat(handle).st_mode)
        if kind not in (stat.S_IFREG, stat.S_IFDIR):
            raise OSError(f"{name} is no longer a file or directory")
        os.chmod(f"/proc/self/fd/{handle}", mode)
    finally:
        os.close(handle)


def _set_dir_modes(handles: DirHandles, plan: Plan) -> None:
    """Directory modes last, deepest first, so a read-only directory was still writable while
    its contents were put in place."""
    for effect in reversed(plan.effects):
        if effect.path not in plan.todo or effect.after.kind != "dir":
            continue
        fd, name = _split(handles, effect.path)
        _chmod(fd, name, effect.after.mode)


def _recorded(handles: DirHandles, plan: Plan, effect: Effect) -> Effect:
    """The effect with its after state as now on disk (what an undo checks against). A file
    keeps the hash already known when it is visibly the inode that was staged, or for a mode
    change the inode that was checked; anything else is read again."""
    listing = effect.after.kind == "dir" and effect.before.kind != "dir"
    if not effect.after.exists:
        # Under a symlink this change made, the workspace holds nothing at the path.
        now = handles.state(effect.path)
        return Effect(effect.path, effect.before, ABSENT if now == BLOCKED else now)
    fd, name = _split(handles, effect.path)
    try:
        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        info = None
    sha = None
    if info is not None and stat.S_ISREG(info.st_mode):
        staged = plan.staged.get(effect.path)
        before = effect.before
        if staged is not None and info.st_ino == staged[1]:
            sha = effect.after.sha256
        elif effect.kind == "mode_changed" and (info.st_ino, info.st_size, info.st_mtime_ns) == (
            before.ino,
            before.size,
            before.mtime_ns,
        ):
            sha = before.sha256
    if sha is not None and info is not None:
        return Effect(effect.path, effect.before, state_of(info, sha256=sha))
    return Effect(effect.path, effect.before, handles.state(effect.path, listing=listing))
