"""SafeREPL's commands that only read the workspace: ls, cat, grep and find."""

from __future__ import annotations

import contextlib
import fnmatch
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path

from core.tools.repl_paths import READ, Usage, about, is_dir, opened, split_flags
from core.tools.workspace import MOUNT, Workspace

MAX_READ = 1 << 20
MAX_LINES = 2000


def ls(ws: Workspace, args: list[str]) -> str:
    """ls [-l] [-a] [-1] [PATH...]"""
    flags, paths = split_flags(args, "la1")
    lines: list[str] = []
    for name in paths or [str(MOUNT)]:
        path = ws.resolve(name)
        with about(ws, path):
            lines += _listing(ws, path, "a" in flags, "l" in flags)
    return "\n".join(lines)


def cat(ws: Workspace, args: list[str]) -> str:
    """cat FILE..."""
    if not args:
        raise Usage("which file?")
    parts = []
    for name in args:
        path = ws.resolve(name)
        with about(ws, path), opened(ws, path) as fd:
            parts.append(os.read(fd, MAX_READ).decode("utf-8", errors="replace"))
    return "".join(parts)


def grep(ws: Workspace, args: list[str]) -> str:
    """grep [-i] [-n] [-r] [-l] PATTERN [PATH...]"""
    flags, rest = split_flags(args, "inrl")
    if not rest:
        raise Usage("grep [-i] [-n] [-r] [-l] PATTERN [PATH...]")
    try:
        pattern = re.compile(rest[0], re.IGNORECASE if "i" in flags else 0)
    except re.error as exc:
        raise Usage(f"bad pattern: {exc}") from None
    hits: list[str] = []
    for name in rest[1:] or [str(MOUNT)]:
        path = ws.resolve(name)
        with about(ws, path):
            for shown, data in _texts(ws, path, recursive="r" in flags or not rest[1:]):
                hits += _grep_text(shown, data, pattern, flags)
                if len(hits) >= MAX_LINES:
                    return "\n".join(hits[:MAX_LINES])
    return "\n".join(hits)


def find(ws: Workspace, args: list[str]) -> str:
    """find [PATH] [-name PATTERN]"""
    start, pattern = str(MOUNT), "*"
    if args and not args[0].startswith("-"):
        start, args = args[0], args[1:]
    if args[:1] == ["-name"] and len(args) == 2:
        pattern = args[1]
    elif args:
        raise Usage("find [PATH] [-name PATTERN]")
    root = ws.resolve(start)
    found: list[str] = []
    with about(ws, root):
        if not is_dir(ws, root):
            return ""
        with ws.directory(root) as top:
            for where, dirs, files, _ in os.fwalk(".", dir_fd=top):
                dirs.sort()
                matched = [n for n in dirs + files if fnmatch.fnmatch(n, pattern)]
                found += [ws.display(root / where / n) for n in matched]
                if len(found) >= MAX_LINES:
                    break
    return "\n".join(sorted(found)[:MAX_LINES])


def _listing(ws: Workspace, path: Path, hidden: bool, long: bool) -> list[str]:
    if not is_dir(ws, path):
        with ws.parent_of(path) as (fd, name):
            info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        return [_ls_line(name, info, long)]
    with ws.directory(path) as fd, os.scandir(fd) as entries:
        found = sorted(entries, key=lambda e: e.name)
        return [
            _ls_line(e.name, e.stat(follow_symlinks=False), long)
            for e in found
            if hidden or not e.name.startswith(".")
        ]


def _ls_line(name: str, info: os.stat_result, long: bool) -> str:
    folder = stat.S_ISDIR(info.st_mode)
    if not long:
        return name + ("/" if folder else "")
    kind = "d" if folder else "l" if stat.S_ISLNK(info.st_mode) else "-"
    return f"{kind} {info.st_size:>10} {name}{'/' if folder else ''}"


def _texts(ws: Workspace, path: Path, *, recursive: bool) -> Iterator[tuple[str, bytes]]:
    """(shown name, head of content) of the regular files at or below `path`."""
    if not is_dir(ws, path):
        with opened(ws, path) as fd:
            yield ws.display(path), os.read(fd, MAX_READ)
        return
    if not recursive:
        return
    with ws.directory(path) as top:
        for where, dirs, files, fd in os.fwalk(".", dir_fd=top):
            dirs.sort()
            for name in sorted(files):
                with contextlib.suppress(OSError):  # a link, a FIFO, gone since
                    handle = os.open(name, READ, dir_fd=fd)
                    try:
                        if stat.S_ISREG(os.fstat(handle).st_mode):
                            shown = ws.display(path / where / name)
                            yield shown, os.read(handle, MAX_READ)
                    finally:
                        os.close(handle)


def _grep_text(shown: str, data: bytes, pattern: re.Pattern[str], flags: set[str]) -> list[str]:
    text = data.decode("utf-8", errors="replace")
    found = [(n, line) for n, line in enumerate(text.splitlines(), 1) if pattern.search(line)]
    if "l" in flags:
        return [shown] if found else []
    return [f"{shown}:{n}:{line}" if "n" in flags else f"{shown}:{line}" for n, line in found]
