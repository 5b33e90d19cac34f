"""The effect set of a dry run, read from its overlay's upper layer only.

Whiteouts (character devices 0/0) are deletions; a directory marked opaque hides everything
the workspace had in it. Everything else in the upper layer was created or copied up; a copy
whose content and mode did not change (a `touch`) is no effect. The workspace is only read
where the upper layer names a path, so the cost follows what the command wrote.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from core.errors import ToolFailed
from core.tools.effects.effectset import EffectSet
from core.tools.effects.files import DIR_FLAGS, DirHandles, is_whiteout, read_state, state_of
from core.tools.effects.git import summarise_git
from core.tools.effects.history import judge_history
from core.tools.effects.model import ABSENT, Effect, FileState

MAX_DEPTH = 200
MAX_EFFECTS = 200_000
READ_LIMIT = 16 << 20  # git metadata files read for the summary


class EffectsTooLarge(ToolFailed):
    """The command changed more than an effect set can show; nothing will be applied."""


def _join(parent: str, name: str) -> str:
    return f"{parent}/{name}" if parent else name


def _lstat(dir_fd: int | None, name: str) -> os.stat_result | None:
    if dir_fd is None:
        return None
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


class _Scan:
    """One walk of an upper layer against its lower layer (both opened by fd, links never
    followed)."""

    def __init__(self, opaque_xattr: str) -> None:
        self._opaque_xattr = opaque_xattr
        self.effects: list[Effect] = []

    def add(self, path: str, before: FileState, after: FileState) -> None:
        if len(self.effects) >= MAX_EFFECTS:
            raise EffectsTooLarge(
                f"the command changed more than {MAX_EFFECTS:,} paths; nothing was applied"
            )
        self.effects.append(Effect(path, before, after))

    def root(self, upper_fd: int, lower_fd: int) -> None:
        upper, lower = os.fstat(upper_fd), os.fstat(lower_fd)
        if stat.S_IMODE(upper.st_mode) != stat.S_IMODE(lower.st_mode):
            self.add(".", state_of(lower), state_of(upper))
        self.walk("", upper_fd, lower_fd, opaque=self.is_opaque(upper_fd), depth=0)

    def is_opaque(self, fd: int) -> bool:
        try:
            return os.getxattr(fd, self._opaque_xattr) == b"y"
        except OSError:
            return False

    def walk(self, rel: str, upper_fd: int, lower_fd: int | None, opaque: bool, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise EffectsTooLarge(f"the command made directories over {MAX_DEPTH} levels deep")
        with os.scandir(upper_fd) as entries:
            listed = sorted((entry.name, entry.stat(follow_symlinks=False)) for entry in entries)
        for name, info in listed:
            path, below = _join(rel, name), _lstat(lower_fd, name)
            if is_whiteout(info):
                if below is not None and lower_fd is not None:
                    self.gone(path, lower_fd, name, below, depth)
            elif stat.S_ISDIR(info.st_mode):
                self.directory(path, (upper_fd, lower_fd), name, (info, below), opaque, depth)
            else:
                self.leaf(path, upper_fd, lower_fd, name, below, depth)
        if opaque and lower_fd is not None:
            seen = {name for name, _ in listed}
            for name in sorted(set(os.listdir(lower_fd)) - seen):
                below = _lstat(lower_fd, name)
                if below is not None:
                    self.gone(_join(rel, name), lower_fd, name, below, depth)

    def directory(
        self,
        path: str,
        fds: tuple[int, int | None],
        name: str,
        infos: tuple[os.stat_result, os.stat_result | None],
        opaque: bool,
        depth: int,
    ) -> None:
        (upper_fd, lower_fd), (info, below) = fds, infos
        child = os.open(name, DIR_FLAGS, dir_fd=upper_fd)
        try:
            if below is not None and stat.S_ISDIR(below.st_mode) and lower_fd is not None:
                if stat.S_IMODE(below.st_mode) != stat.S_IMODE(info.st_mode):
                    self.add(path, state_of(below), state_of(info))
                lower_child = os.open(name, DIR_FLAGS, dir_fd=lower_fd)
                try:
                    inner_opaque = opaque or self.is_opaque(child)
                    self.walk(path, child, lower_child, inner_opaque, depth + 1)
                finally:
                    os.close(lower_child)
                return
            before = ABSENT
            if below is not None and lower_fd is not None:
                before = self.gone(path, lower_fd, name, below, depth, record=False)
            self.add(path, before, state_of(info))
            self.walk(path, child, None, opaque=False, depth=depth + 1)
        finally:
            os.close(child)

    def leaf(
        self,
        path: str,
        upper_fd: int,
        lower_fd: int | None,
        name: str,
        below: os.stat_result | None,
        depth: int,
    ) -> None:
        after = read_state(upper_fd, name)
        if after.kind == "other":
            return  # a socket a process left: nothing to carry over
        if below is None or lower_fd is None:
            self.add(path, ABSENT, after)
            return
        if stat.S_ISDIR(below.st_mode):
            before = self.gone(path, lower_fd, name, below, depth, record=False)
        else:
            before = read_state(lower_fd, name)
            if before.identity() == after.identity():
                return  # copied up but unchanged (touched, opened for writing)
        self.add(path, before, after)

    def gone(
        self,
        path: str,
        lower_fd: int,
        name: str,
        info: os.stat_result,
        depth: int,
        record: bool = True,
    ) -> FileState:
        """Record `path` (and, for a directory, everything in it) as deleted; its state."""
        if depth > MAX_DEPTH:
            raise EffectsTooLarge(f"the command removed directories over {MAX_DEPTH} levels deep")
        if stat.S_ISDIR(info.st_mode):
            fd = os.open(name, DIR_FLAGS, dir_fd=lower_fd)
            try:
                for child in sorted(os.listdir(fd)):
                    below = _lstat(fd, child)
                    if below is not None:
                        self.gone(_join(path, child), fd, child, below, depth + 1)
            finally:
                os.close(fd)
            before = read_state(lower_fd, name, listing=True)
        else:
            before = read_state(lower_fd, name)
        if record:
            self.add(path, before, ABSENT)
        return before


def scan_upper(upper: Path, lower: Path, opaque_xattr: str) -> EffectSet:
    """The effects of the overlay whose upper layer is `upper` on the workspace `lower`,
    with what its ref changes do to the repositories' history.

    Blocking (file hashing, git): call it in a thread.
    """
    scan = _Scan(opaque_xattr)
    upper_fd = os.open(upper, DIR_FLAGS)
    try:
        lower_fd = os.open(lower, DIR_FLAGS)
        try:
            scan.root(upper_fd, lower_fd)
        finally:
            os.close(lower_fd)
    finally:
        os.close(upper_fd)
    effects = tuple(sorted(scan.effects, key=lambda effect: effect.path))
    before = _Reader(lower, None, effects)
    git = summarise_git(effects, before, _Reader(lower, upper, effects))
    return EffectSet(effects, judge_history(git, lower, upper, before))


class _Reader:
    """Reads a small file as the workspace has it (`upper` None) or as the dry run left it."""

    def __init__(self, lower: Path, upper: Path | None, effects: tuple[Effect, ...]) -> None:
        self._lower = lower
        self._upper = upper
        self._changed = {effect.path: effect for effect in effects}

    def __call__(self, path: str) -> bytes | None:
        effect = self._changed.get(path)
        root = self._lower
        if self._upper is not None and effect is not None:
            if effect.after.kind != "file":
                return None
            root = self._upper
        with DirHandles(root) as dirs:
            parent, _, name = path.rpartition("/")
            try:
                fd = os.open(
                    name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dirs.get(parent)
                )
            except OSError as exc:
                gone = (errno.ENOENT, errno.ELOOP, errno.ENOTDIR, errno.EISDIR, errno.ENXIO)
                if exc.errno in gone:  # ENXIO: a socket, which is no file either
                    return None
                raise
            try:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    return None
                return os.read(fd, READ_LIMIT)
            finally:
                os.close(fd)
