"""Reading paths without following symlinks: directory handles, file states and hashes."""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from collections import OrderedDict
from types import TracebackType

from core.tools.effects.model import ABSENT, FileState, Kind

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: a file swapped for a FIFO after its lstat must not hang the reader.
FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
BLOCK = 1 << 20
BLOCKED = FileState(kind="other")  # the path cannot be reached without following a link


class PathBlocked(OSError):
    """A directory on the way is a symlink or not a directory. `link`: it is a symlink, so
    the path cannot be reached without leaving the tree (under a file, nothing can be)."""

    def __init__(self, directory: str, link: bool) -> None:
        super().__init__(errno.ENOTDIR, f"{directory}: a symlink or file is in the way")
        self.link = link


def kind_of(mode: int) -> Kind:
    """The kind of file an st_mode describes."""
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISLNK(mode):
        return "symlink"
    return "fifo" if stat.S_ISFIFO(mode) else "other"


def is_whiteout(info: os.stat_result) -> bool:
    """An overlayfs whiteout: a character device 0/0 standing for a deleted path."""
    return stat.S_ISCHR(info.st_mode) and info.st_rdev == 0


def hash_fd(fd: int) -> str:
    """sha256 of what is left to read from `fd`."""
    digest = hashlib.sha256()
    while block := os.read(fd, BLOCK):
        digest.update(block)
    return digest.hexdigest()


def listing_digest(dir_fd: int, name: str) -> str:
    """sha256 of the sorted names inside directory `name`."""
    fd = os.open(name, DIR_FLAGS, dir_fd=dir_fd)
    try:
        names = sorted(os.listdir(fd))
    finally:
        os.close(fd)
    return hashlib.sha256("\0".join(names).encode("utf-8", "surrogateescape")).hexdigest()


def state_of(info: os.stat_result, **extra: str | None) -> FileState:
    """A FileState from an lstat result (hash and target given by the caller)."""
    return FileState(
        kind=kind_of(info.st_mode),
        mode=stat.S_IMODE(info.st_mode),
        size=info.st_size if stat.S_ISREG(info.st_mode) else 0,
        sha256=extra.get("sha256"),
        target=extra.get("target"),
        mtime_ns=info.st_mtime_ns,
        ctime_ns=info.st_ctime_ns,
        ino=info.st_ino,
        uid=info.st_uid,
        gid=info.st_gid,
    )


def read_state(
    dir_fd: int, name: str, *, known: FileState | None = None, listing: bool = False
) -> FileState:
    """The state of `name` in the directory `dir_fd`, links not followed.

    A file untouched since `known` was taken keeps `known`'s hash; `listing` hashes the names
    in a directory.
    """
    try:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return ABSENT
    state = state_of(info)
    if state.kind == "symlink":
        return state_of(info, target=os.readlink(name, dir_fd=dir_fd))
    if state.kind == "dir" and listing:
        return state_of(info, sha256=listing_digest(dir_fd, name))
    if state.kind != "file":
        return state
    if known is not None and known.unchanged_stat(state):
        return state_of(info, sha256=known.sha256)
    fd = os.open(name, FILE_FLAGS, dir_fd=dir_fd)
    try:
        now = os.fstat(fd)
        if not stat.S_ISREG(now.st_mode):
            return state_of(now)
        return state_of(now, sha256=hash_fd(fd))
    finally:
        os.close(fd)


class DirHandles:
    """Open directories under a root by relative path, one component at a time without
    following symlinks, keeping the most recent few open. A context manager."""

    def __init__(self, root: str | os.PathLike[str], keep: int = 64) -> None:
        self._root = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        self._open: OrderedDict[str, int] = OrderedDict()
        self._keep = keep

    def __enter__(self) -> DirHandles:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close every handle."""
        for fd in self._open.values():
            os.close(fd)
        self._open.clear()
        if self._root >= 0:
            os.close(self._root)
            self._root = -1

    def get(self, directory: str) -> int:
        """An fd for the relative `directory` ("" is the root), valid until the next call;
        PathBlocked when a component is a symlink or a file, FileNotFoundError when one is
        missing."""
        if directory in ("", "."):
            return self._root
        fd = self._open.get(directory)
        if fd is not None:
            self._open.move_to_end(directory)
            return fd
        parent, _, name = directory.rpartition("/")
        parent_fd = self.get(parent)
        try:
            fd = os.open(name, DIR_FLAGS, dir_fd=parent_fd)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                info = os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
                raise PathBlocked(directory, stat.S_ISLNK(info.st_mode)) from None
            raise
        self._open[directory] = fd
        while len(self._open) > self._keep:
            _, old = self._open.popitem(last=False)
            os.close(old)
        return fd

    def forget(self, directory: str) -> None:
        """Drop the handles for `directory` and everything under it (it was removed or
        replaced)."""
        prefix = directory + "/"
        for key in [k for k in self._open if k == directory or k.startswith(prefix)]:
            os.close(self._open.pop(key))

    def state(
        self, path: str, *, known: FileState | None = None, listing: bool = False
    ) -> FileState:
        """read_state for a relative path. Under a missing parent or a file it reads as
        absent; under a symlink as "other", which matches no state taken before."""
        parent, _, name = path.rpartition("/")
        try:
            fd = self.get(parent)
        except FileNotFoundError:
            return ABSENT
        except PathBlocked as blocked:
            return BLOCKED if blocked.link else ABSENT
        return read_state(fd, name, known=known, listing=listing)
