"""What SafeREPL's commands share: their two errors, option parsing, and reaching a workspace
entry through directory descriptors without following a symlink (Workspace.directory /
parent_of, with O_NOFOLLOW on the last component)."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from core.tools.oserrors import explain, shorten
from core.tools.workspace import Workspace

READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK  # a FIFO cannot make cat hang
DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW


class Usage(Exception):
    """A command used wrongly; the message is shown to the owner."""


class Failed(Exception):
    """A command that failed on a path; the message names it."""


def split_flags(args: list[str], allowed: str) -> tuple[set[str], list[str]]:
    """The single-letter options before the first operand, and the operands; an option not
    in `allowed` is a Usage error."""
    flags: set[str] = set()
    rest: list[str] = []
    for arg in args:
        if arg.startswith("-") and len(arg) > 1 and not rest:
            for letter in arg[1:]:
                if letter not in allowed:
                    raise Usage(f"unsupported option -{letter}")
                flags.add(letter)
        else:
            rest.append(arg)
    return flags, rest


@contextlib.contextmanager
def about(ws: Workspace, path: Path) -> Iterator[None]:
    """OS errors while working on `path` name it as the owner knows it."""
    try:
        yield
    except OSError as exc:
        raise Failed(f"{shorten(ws.display(path))}: {explain(exc)}") from None


def _kind(ws: Workspace, path: Path) -> int | None:
    """The st_mode of the entry `path` (not followed), None when there is none."""
    if path == ws.root:
        return stat.S_IFDIR
    with ws.parent_of(path) as (fd, name):
        try:
            return os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
        except FileNotFoundError:
            return None


def is_dir(ws: Workspace, path: Path) -> bool:
    """Whether `path` is a folder itself (a symlink to one is not)."""
    mode = _kind(ws, path)
    return mode is not None and stat.S_ISDIR(mode)


@contextlib.contextmanager
def opened(ws: Workspace, path: Path) -> Iterator[int]:
    """A descriptor of the regular file `path`, opened without following a symlink."""
    if path == ws.root:
        raise IsADirectoryError(errno.EISDIR, "Is a directory")
    with ws.parent_of(path) as (fd, name):
        handle = os.open(name, READ, dir_fd=fd)
    try:
        mode = os.fstat(handle).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "Is a directory")
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, "not a regular file")
        yield handle
    finally:
        os.close(handle)


def inside(ws: Workspace, folder: Path, name: str) -> Path:
    """`folder/name`, checked by the guard again (the new name may be sensitive)."""
    return ws.entry(f"{ws.display(folder)}/{name}")
