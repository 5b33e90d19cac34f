"""Changes Lancelot makes itself, without a dry run (the agent's write_file, delete_file and
move_file): their effects read from the workspace on the host, so that they are applied
through the same journal as a command's, with a backup of what they overwrite or delete and
an Undo.

Each function reads the paths it names and returns the effects that make the change; nothing
here writes. Blocking: call them in a thread.
"""

from __future__ import annotations

import errno
import hashlib
import os
from collections.abc import Iterator

from core.tools.effects.files import FILE_FLAGS, DirHandles, PathBlocked
from core.tools.effects.model import ABSENT, Effect, FileState

NEW_FILE_MODE = 0o644
NEW_DIR_MODE = 0o755
MAX_TREE = 20_000  # paths one delete or move may name (a larger tree is refused, not cut)


class TreeTooLarge(ValueError):
    """A delete or move would name more paths than one change holds."""


def _parents(path: str) -> list[str]:
    """ "a/b/c.txt" -> ["a", "a/b"]."""
    parts = path.split("/")[:-1]
    return ["/".join(parts[: n + 1]) for n in range(len(parts))]


def _made_dirs(handles: DirHandles, path: str) -> list[Effect]:
    """Effects creating each missing directory above `path`; PathBlocked when one of them is
    a file or a link."""
    made: list[Effect] = []
    for parent in _parents(path):
        now = handles.state(parent)
        if now.kind == "dir":
            continue
        if now.exists:
            raise PathBlocked(parent, now.kind == "symlink")
        made.append(Effect(parent, ABSENT, FileState(kind="dir", mode=NEW_DIR_MODE)))
    return made


def write_effects(handles: DirHandles, path: str, data: bytes) -> list[Effect]:
    """Put `data` at `path`: a new file (and the directories above it), or new content for
    an existing one (its mode kept). Never replaces a folder, a link or anything else."""
    before = handles.state(path)
    if before.kind == "dir":
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
    if before.exists and before.kind != "file":
        raise FileExistsError(errno.EEXIST, "not a regular file", path)
    mode = before.mode if before.kind == "file" else NEW_FILE_MODE
    after = FileState(
        kind="file", mode=mode, size=len(data), sha256=hashlib.sha256(data).hexdigest()
    )
    return [*_made_dirs(handles, path), Effect(path, before, after)]


def _tree(handles: DirHandles, path: str) -> Iterator[tuple[str, FileState]]:
    """`path` and, for a directory, everything under it, links never followed: (relative
    path, state), each file hashed and each directory's names digested."""
    top = handles.state(path, listing=True)
    yield path, top
    if top.kind != "dir":
        return
    with os.scandir(handles.get(path)) as entries:
        names = sorted(entry.name for entry in entries)
    for name in names:
        yield from _tree(handles, f"{path}/{name}")


def tree_states(handles: DirHandles, path: str) -> list[tuple[str, FileState]]:
    """Every path at and under `path` with its state; TreeTooLarge past MAX_TREE."""
    found: list[tuple[str, FileState]] = []
    for item in _tree(handles, path):
        found.append(item)
        if len(found) > MAX_TREE:
            raise TreeTooLarge(f"{path} holds more than {MAX_TREE:,} paths")
    return found


def delete_effects(handles: DirHandles, path: str) -> list[Effect]:
    """Remove `path` and everything under it."""
    return [Effect(name, state, ABSENT) for name, state in tree_states(handles, path)]


def move_effects(
    handles: DirHandles, source: str, target: str
) -> tuple[list[Effect], dict[str, str]]:
    """Move `source` (a file, a link or a whole directory) to `target`, which does not hold
    anything of another kind. Returns the effects and, for each new file, the path its content
    is read from (for MovedSource)."""
    moved = tree_states(handles, source)
    effects = [Effect(name, state, ABSENT) for name, state in moved]
    effects += _made_dirs(handles, target)
    origins: dict[str, str] = {}
    for name, state in moved:
        new = target + name[len(source) :]
        before = handles.state(new)
        if before.kind == "dir" and state.kind == "dir":
            before = handles.state(new, listing=True)
        effects.append(Effect(new, before, _moved_state(state)))
        origins[new] = name
    return effects, origins


def _moved_state(state: FileState) -> FileState:
    """What a moved path is at its new place: its kind, mode, content or link target."""
    return FileState(
        kind=state.kind,
        mode=state.mode,
        size=state.size,
        sha256=state.sha256 if state.kind == "file" else None,
        target=state.target,
    )


class BytesSource:
    """New file contents held in memory (a write's), each handed over as an anonymous
    in-memory file."""

    linkable = False

    def __init__(self, contents: dict[str, bytes]) -> None:
        self._contents = contents

    def open(self, effect: Effect) -> int:
        """A read-only-positioned fd holding the content for `effect.path`."""
        data = self._contents[effect.path]
        fd = os.memfd_create("lancelot-write", os.MFD_CLOEXEC)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.lseek(fd, 0, os.SEEK_SET)
        except BaseException:
            os.close(fd)
            raise
        return fd


class MovedSource:
    """A move's new contents, read from where they are now. Never linked: the old name goes
    to the undo store, and a shared inode would let a later write change the backup."""

    linkable = False

    def __init__(self, handles: DirHandles, origins: dict[str, str]) -> None:
        self._handles = handles
        self._origins = origins

    def open(self, effect: Effect) -> int:
        """A read-only fd on the file `effect.path` is moved from."""
        origin = self._origins[effect.path]
        parent, _, name = origin.rpartition("/")
        return os.open(name, FILE_FLAGS, dir_fd=self._handles.get(parent))
