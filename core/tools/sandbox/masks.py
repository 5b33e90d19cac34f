"""Sensitive files hidden from the sandbox by construction, not by how a command is spelled.

Every sensitive file in the workspace (`is_sensitive`, the rule `read_file` and the ask for
a command naming one use) gets an empty read-only stand-in bind-mounted over it in the
container, and every sensitive folder an empty read-only folder. Why mounts rather than a
filtered copy or a check of what a command prints:

- whatever the command does, every route to the file's content passes through the path the
  mount covers: a name built at run time (`f=.e; cat ${f}nv`), a glob, `tar c .`,
  `grep -r`, `find -exec`, a program in Python, a copy of the whole tree (it copies the
  empty stand-in), a symlink (it resolves to the covered path inside the container);
- the file cannot be written, truncated, renamed, deleted or hard-linked from inside (a
  read-only mount that is busy, on another mount: EROFS, EBUSY, EXDEV), so a dry run never
  shows a change to it and its apply never loses it;
- a mount sits on the directory entry it was made on. When the host replaces that entry (a
  file saved by rename, `git config`, a folder above removed and made again), the kernel
  drops the mount, and a dry-run overlay made before keeps seeing the old folders. So the
  masks carry the identity (device, inode) of every masked path and of each folder above
  it: a container made for other identities is never used, whatever the paths' names;
- a repository's `.git/config` is one git must read: its stand-in keeps what git needs and
  drops what can hold credentials (gitconfig.py), and a config holding nothing it drops is
  not masked at all, so git writes it in a dry run as it would for real;
- a hard link to a sensitive file under another name is the one route a path does not
  cover: the scan finds such links (only when a sensitive file has more than one) and
  covers them too;
- a file a command creates while it runs was made from what it could see, so holds no
  secret; a sensitive file that appears in the workspace is covered from the next run on
  (the scan runs before every command).
"""

from __future__ import annotations

import contextlib
import fnmatch
import hashlib
import os
import posixpath
import shutil
import stat
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.tools.sandbox.gitconfig import is_repository_config, stand_in
from core.tools.workspace import MOUNT, is_sensitive

REVEAL = "reveal"  # the action parameter listing the sensitive names an approval showed
_GLOB = frozenset("*?[")
_CONFIG_LIMIT = 1 << 20  # a repository config larger than this is masked whole
Identity = tuple[tuple[int, int], ...]  # (device, inode) of a path and each folder above it


@dataclass(frozen=True, slots=True)
class Masks:
    """The workspace paths (relative, posix) a container gets stand-ins over."""

    files: frozenset[str] = frozenset()
    dirs: frozenset[str] = frozenset()
    # What a file's stand-in holds when not nothing (a repository config git needs).
    contents: frozenset[tuple[str, bytes]] = frozenset()
    # Each masked path's identity when scanned: masks equal only if these are too.
    identities: frozenset[tuple[str, Identity]] = frozenset()

    def without(self, named: Iterable[str]) -> Masks:
        """These masks less the paths `named` names (as a command names them: `.env`,
        `/workspace/.env`, `./notes/../.env`, a glob like `.en?`)."""
        patterns = [_cleaned(name) for name in named]
        patterns = [p for p in patterns if p]
        if not patterns:
            return self

        def gone(path: str) -> bool:
            return any(_names(n, path) for n in patterns)

        return Masks(
            frozenset(p for p in self.files if not gone(p)),
            frozenset(p for p in self.dirs if not gone(p)),
            frozenset(c for c in self.contents if not gone(c[0])),
            frozenset(i for i in self.identities if not gone(i[0])),
        )

    def mounts(self, stand_ins: StandIns) -> list[Any]:
        """The Docker mounts that put the stand-ins over these paths, read-only."""
        from docker.types import Mount

        texts = dict(self.contents)
        found = [
            (path, stand_ins.holding(texts[path]) if path in texts else stand_ins.file)
            for path in sorted(self.files)
        ]
        found += [(path, stand_ins.folder) for path in sorted(self.dirs)]
        return [
            Mount(f"{MOUNT}/{path}", str(source), type="bind", read_only=True)
            for path, source in found
        ]


NO_MASKS = Masks()


def revealed(action_params: dict[str, object]) -> tuple[str, ...]:
    """The sensitive names an action carries for its approval card (strings only)."""
    names = action_params.get(REVEAL)
    if not isinstance(names, list | tuple):
        return ()
    return tuple(name for name in names if isinstance(name, str))


def _cleaned(name: str) -> str:
    """A name as a workspace-relative path: `/workspace/./a/../.env` -> `.env`."""
    name = name.strip()
    if name == str(MOUNT) or name.startswith(f"{MOUNT}/"):
        name = name[len(str(MOUNT)) :]
    cleaned = posixpath.normpath(name.lstrip("/") or ".")
    return "" if cleaned in (".", "..") or cleaned.startswith("../") else cleaned


def _names(pattern: str, path: str) -> bool:
    if _GLOB & set(pattern):
        return fnmatch.fnmatchcase(path, pattern)
    return path == pattern


def find_sensitive(root: Path) -> Masks:
    """Every sensitive file and folder under `root`, symlinks not followed, plus every
    other name of a sensitive file that has hard links; a repository config only if it
    holds something its stand-in drops. Blocking: call it in a thread."""
    files: set[str] = set()
    dirs: set[str] = set()
    contents: set[tuple[str, bytes]] = set()
    linked: set[tuple[int, int]] = set()
    for path, entry in _walk(root, prune=is_sensitive):
        if not is_sensitive(path):
            continue
        if entry.is_dir(follow_symlinks=False):
            dirs.add(path)
            linked |= _linked_inside(root / path)
            continue
        if is_repository_config(path) and entry.is_file(follow_symlinks=False):
            text = _repository_config(root / path)
            if text is None:
                continue
            contents.add((path, text))
        files.add(path)
        linked |= _linked([entry])
    if linked:
        files |= {p for p, e in _walk(root, prune=is_sensitive) if _inode(e) in linked}
    identities = frozenset((p, _identity(root, p)) for p in files | dirs)
    return Masks(frozenset(files), frozenset(dirs), frozenset(contents), identities)


def _repository_config(path: Path) -> bytes | None:
    """What a repository config's stand-in holds; None if it needs none (it holds nothing
    the stand-in would drop). Unreadable or too big to check: an empty stand-in."""
    try:
        with open(path, "rb") as file:
            raw = file.read(_CONFIG_LIMIT + 1)
    except OSError:
        return b""
    if len(raw) > _CONFIG_LIMIT:
        return b""
    return stand_in(raw)


def _identity(root: Path, path: str) -> Identity:
    """(device, inode) of `path` and of each folder above it inside `root`."""
    parts = path.split("/")
    found = []
    for depth in range(1, len(parts) + 1):
        try:
            info = os.lstat(root.joinpath(*parts[:depth]))
        except OSError:
            break
        found.append((info.st_dev, info.st_ino))
    return tuple(found)


def _walk(root: Path, prune: Any = None) -> Iterator[tuple[str, os.DirEntry[str]]]:
    """(relative path, entry) for everything under `root` except symlinks; folders for
    which `prune` says yes are listed but not entered."""
    stack = [""]
    while stack:
        relative = stack.pop()
        try:
            listing = os.scandir(root / relative if relative else root)
        except OSError:  # gone, or unreadable: nothing under it can be shown either
            continue
        with listing:
            for entry in listing:
                if entry.is_symlink():
                    continue
                path = f"{relative}/{entry.name}" if relative else entry.name
                yield path, entry
                if entry.is_dir(follow_symlinks=False) and not (prune and prune(path)):
                    stack.append(path)


def _linked_inside(folder: Path) -> set[tuple[int, int]]:
    return _linked(entry for _, entry in _walk(folder))


def _linked(entries: Iterable[os.DirEntry[str]]) -> set[tuple[int, int]]:
    """The inodes of the regular files among `entries` that have other names too."""
    found: set[tuple[int, int]] = set()
    for entry in entries:
        with contextlib.suppress(OSError):
            info = entry.stat(follow_symlinks=False)
            if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
                found.add((info.st_dev, info.st_ino))
    return found


def _inode(entry: os.DirEntry[str]) -> tuple[int, int] | None:
    if not entry.is_file(follow_symlinks=False):
        return None
    try:
        info = entry.stat(follow_symlinks=False)
    except OSError:
        return None
    return (info.st_dev, info.st_ino) if info.st_nlink > 1 else None


class StandIns:
    """An empty read-only file and an empty read-only folder on the host, outside the
    workspace, that the masks mount. `home` None: a private temporary folder, removed by
    `close()`."""

    def __init__(self, home: Path | None = None) -> None:
        self._temporary = home is None
        base = Path(tempfile.mkdtemp(prefix="lancelot-masks-")) if home is None else home
        base.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.file = base / "empty"
        self.folder = base / "empty.d"
        self._base = base
        self._prepare()

    def _prepare(self) -> None:
        """(Re)make the stand-ins empty: a file with content or a folder with entries is
        replaced (they are the owner's own files, but what they hold would be shown)."""
        if self.file.is_symlink() or not self.file.is_file() or self.file.stat().st_size:
            with contextlib.suppress(FileNotFoundError):
                os.chmod(self.file, 0o600)
                self.file.unlink()
            self.file.touch(mode=0o444)
        os.chmod(self.file, 0o444)
        if self.folder.is_symlink() or not self.folder.is_dir() or any(self.folder.iterdir()):
            with contextlib.suppress(FileNotFoundError):
                if self.folder.is_symlink() or not self.folder.is_dir():
                    self.folder.unlink()
                else:
                    os.chmod(self.folder, 0o700)
                    shutil.rmtree(self.folder)
            self.folder.mkdir()
        os.chmod(self.folder, 0o555)  # noqa: S103 - empty, and mounted read-only

    def holding(self, text: bytes) -> Path:
        """A read-only stand-in holding `text` (a sanitized repository config), made once
        per content and checked on every use (the folder is the owner's, but outlives us)."""
        path = self._base / f"config-{hashlib.sha256(text).hexdigest()[:32]}"
        if path.is_symlink() or not path.is_file() or path.read_bytes() != text:
            with contextlib.suppress(FileNotFoundError):
                os.chmod(path, 0o600, follow_symlinks=False)
                path.unlink()
            path.write_bytes(text)
        os.chmod(path, 0o444)
        return path

    def close(self) -> None:
        """Remove the private temporary folder, if this made one."""
        if self._temporary:
            with contextlib.suppress(OSError):
                os.chmod(self.folder, 0o700)
            shutil.rmtree(self._base, ignore_errors=True)
