"""SafeREPL: ls, cat, grep, find, cp, mv, rm, mkdir, touch, echo, pwd with the standard
library inside the workspace. Never a shell: no pipes, globs, redirects or substitutions.

Every path passes the workspace guard and is then reached through directory descriptors
opened one component at a time without following symlinks, with O_NOFOLLOW on the last one
(Workspace.directory / parent_of, as FileOps does). A writer that swaps a file or folder for
a symlink between the check and the use makes the command fail; it never leads it outside.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fnmatch
import os
import re
import secrets
import shlex
import shutil
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

from core.errors import ToolUnavailable
from core.tools.action import ToolAction
from core.tools.base import ToolResult, bounded
from core.tools.capability import CapabilityTokens
from core.tools.oserrors import explain, shorten
from core.tools.workspace import MOUNT, Workspace

SHELL_SYNTAX = re.compile(r"[|;&<>`$]")
MAX_READ = 1 << 20
MAX_LINES = 2000
MAX_DEPTH = 64  # cp -r goes no deeper (each level holds two descriptors)
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK  # a FIFO cannot make cat hang
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW


class Usage(Exception):
    """A command used wrongly; the message is shown to the owner."""


class Failed(Exception):
    """A command that failed on a path; the message names it."""


class SafeRepl:
    """The CommandRunner for the workspace when no sandbox is in use."""

    name = "safe_repl"
    COMMANDS = ("ls", "cat", "grep", "find", "cp", "mv", "rm", "mkdir", "touch", "echo", "pwd")

    def __init__(self, workspace: Workspace, capabilities: CapabilityTokens) -> None:
        self._ws = workspace
        self._capabilities = capabilities
        self._table: dict[str, Callable[[list[str]], str]] = {
            name: getattr(self, f"_{name}") for name in self.COMMANDS
        }

    def supports(self, command: str) -> bool:
        """Whether SafeREPL can run this command line at all."""
        try:
            words = shlex.split(command)
        except ValueError:
            return False
        return bool(words) and words[0] in self._table and not SHELL_SYNTAX.search(command)

    async def run(self, action: ToolAction, capability: str | None) -> ToolResult:
        """Run one command line (after checking its capability token) in a thread."""
        self._capabilities.check(capability, action.digest)
        command = action.command or ""
        # Unavailable rather than failed: nothing ran, and the router's reply then names why
        # the sandbox (which runs these) could not.
        if SHELL_SYNTAX.search(command):
            raise ToolUnavailable("pipes, redirects and substitutions need the sandbox")
        words = shlex.split(command)
        if not words or words[0] not in self._table:
            raise ToolUnavailable(f"SafeREPL runs only: {', '.join(self.COMMANDS)}")
        try:
            output = await asyncio.to_thread(self._table[words[0]], words[1:])
            code = 0
        except Usage as exc:
            output, code = f"{words[0]}: {exc}", 2
        except Failed as exc:
            output, code = f"{words[0]}: {exc}", 1
        except OSError as exc:
            output, code = f"{words[0]}: {explain(exc)}", 1
        text, cut = bounded(output)
        return ToolResult(code, text, cut)

    # --- paths ----------------------------------------------------------------------------

    @contextlib.contextmanager
    def _about(self, path: Path) -> Iterator[None]:
        """OS errors while working on `path` name it as the owner knows it."""
        try:
            yield
        except OSError as exc:
            raise Failed(f"{shorten(self._ws.display(path))}: {explain(exc)}") from None

    def _kind(self, path: Path) -> int | None:
        """The st_mode of the entry `path` (not followed), None when there is none."""
        if path == self._ws.root:
            return stat.S_IFDIR
        with self._ws.parent_of(path) as (fd, name):
            try:
                return os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
            except FileNotFoundError:
                return None

    def _is_dir(self, path: Path) -> bool:
        mode = self._kind(path)
        return mode is not None and stat.S_ISDIR(mode)

    @contextlib.contextmanager
    def _opened(self, path: Path) -> Iterator[int]:
        """A descriptor of the regular file `path`, opened without following a symlink."""
        if path == self._ws.root:
            raise IsADirectoryError(errno.EISDIR, "Is a directory")
        with self._ws.parent_of(path) as (fd, name):
            handle = os.open(name, _READ, dir_fd=fd)
        try:
            mode = os.fstat(handle).st_mode
            if stat.S_ISDIR(mode):
                raise IsADirectoryError(errno.EISDIR, "Is a directory")
            if not stat.S_ISREG(mode):
                raise OSError(errno.EINVAL, "not a regular file")
            yield handle
        finally:
            os.close(handle)

    def _inside(self, folder: Path, name: str) -> Path:
        """`folder/name`, checked by the guard again (the new name may be sensitive)."""
        return self._ws.entry(f"{self._ws.display(folder)}/{name}")

    # --- commands -------------------------------------------------------------------------

    @staticmethod
    def _split(args: list[str], allowed: str) -> tuple[set[str], list[str]]:
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

    def _pwd(self, args: list[str]) -> str:
        return str(MOUNT)

    def _echo(self, args: list[str]) -> str:
        return " ".join(args)

    def _ls(self, args: list[str]) -> str:
        flags, paths = self._split(args, "la1")
        lines: list[str] = []
        for name in paths or [str(MOUNT)]:
            path = self._ws.resolve(name)
            with self._about(path):
                lines += self._listing(path, "a" in flags, "l" in flags)
        return "\n".join(lines)

    def _listing(self, path: Path, hidden: bool, long: bool) -> list[str]:
        if not self._is_dir(path):
            with self._ws.parent_of(path) as (fd, name):
                info = os.stat(name, dir_fd=fd, follow_symlinks=False)
            return [_ls_line(name, info, long)]
        with self._ws.directory(path) as fd, os.scandir(fd) as entries:
            found = sorted(entries, key=lambda e: e.name)
            return [
                _ls_line(e.name, e.stat(follow_symlinks=False), long)
                for e in found
                if hidden or not e.name.startswith(".")
            ]

    def _cat(self, args: list[str]) -> str:
        if not args:
            raise Usage("which file?")
        parts = []
        for name in args:
            path = self._ws.resolve(name)
            with self._about(path), self._opened(path) as fd:
                parts.append(os.read(fd, MAX_READ).decode("utf-8", errors="replace"))
        return "".join(parts)

    def _grep(self, args: list[str]) -> str:
        flags, rest = self._split(args, "inrl")
        if not rest:
            raise Usage("grep [-i] [-n] [-r] [-l] PATTERN [PATH...]")
        try:
            pattern = re.compile(rest[0], re.IGNORECASE if "i" in flags else 0)
        except re.error as exc:
            raise Usage(f"bad pattern: {exc}") from None
        hits: list[str] = []
        for name in rest[1:] or [str(MOUNT)]:
            path = self._ws.resolve(name)
            with self._about(path):
                for shown, data in self._texts(path, recursive="r" in flags or not rest[1:]):
                    hits += _grep_text(shown, data, pattern, flags)
                    if len(hits) >= MAX_LINES:
                        return "\n".join(hits[:MAX_LINES])
        return "\n".join(hits)

    def _texts(self, path: Path, *, recursive: bool) -> Iterator[tuple[str, bytes]]:
        """(shown name, head of content) of the regular files at or below `path`."""
        if not self._is_dir(path):
            with self._opened(path) as fd:
                yield self._ws.display(path), os.read(fd, MAX_READ)
            return
        if not recursive:
            return
        with self._ws.directory(path) as top:
            for where, dirs, files, fd in os.fwalk(".", dir_fd=top):
                dirs.sort()
                for name in sorted(files):
                    with contextlib.suppress(OSError):  # a link, a FIFO, gone since
                        handle = os.open(name, _READ, dir_fd=fd)
                        try:
                            if stat.S_ISREG(os.fstat(handle).st_mode):
                                shown = self._ws.display(path / where / name)
                                yield shown, os.read(handle, MAX_READ)
                        finally:
                            os.close(handle)

    def _find(self, args: list[str]) -> str:
        start, pattern = str(MOUNT), "*"
        if args and not args[0].startswith("-"):
            start, args = args[0], args[1:]
        if args[:1] == ["-name"] and len(args) == 2:
            pattern = args[1]
        elif args:
            raise Usage("find [PATH] [-name PATTERN]")
        root = self._ws.resolve(start)
        found: list[str] = []
        with self._about(root):
            if not self._is_dir(root):
                return ""
            with self._ws.directory(root) as top:
                for where, dirs, files, _ in os.fwalk(".", dir_fd=top):
                    dirs.sort()
                    matched = [n for n in dirs + files if fnmatch.fnmatch(n, pattern)]
                    found += [self._ws.display(root / where / n) for n in matched]
                    if len(found) >= MAX_LINES:
                        break
        return "\n".join(sorted(found)[:MAX_LINES])

    def _cp(self, args: list[str]) -> str:
        flags, rest = self._split(args, "r")
        if len(rest) != 2:
            raise Usage("cp [-r] SOURCE TARGET")
        source, target = self._ws.resolve(rest[0]), self._ws.entry(rest[1])
        with self._about(source):
            if self._is_dir(target):
                target = self._inside(target, source.name)
            if target == source:
                raise Usage(f"{rest[0]} and {rest[1]} are the same file")
            if not self._is_dir(source):
                with self._opened(source) as fd, self._ws.parent_of(target) as (into, name):
                    _write_copy(fd, into, name)
                return ""
            if "r" not in flags:
                raise Usage(f"{rest[0]} is a directory (use -r)")
            if target.is_relative_to(source):
                raise Usage(f"cannot copy {rest[0]} into itself")
            with self._ws.directory(source) as fd, self._ws.parent_of(target) as (into, name):
                os.mkdir(name, dir_fd=into)
                copy = os.open(name, _DIR, dir_fd=into)
                try:
                    _copy_tree(fd, copy, MAX_DEPTH)
                finally:
                    os.close(copy)
        return ""

    def _mv(self, args: list[str]) -> str:
        if len(args) != 2:
            raise Usage("mv SOURCE TARGET")
        source, target = self._ws.entry(args[0]), self._ws.entry(args[1])
        with self._about(source):
            if self._is_dir(target):
                target = self._inside(target, source.name)
            with (
                self._ws.parent_of(source) as (sfd, sname),
                self._ws.parent_of(target) as (
                    tfd,
                    tname,
                ),
            ):
                os.stat(sname, dir_fd=sfd, follow_symlinks=False)  # it must exist
                os.rename(sname, tname, src_dir_fd=sfd, dst_dir_fd=tfd)
        return ""

    def _rm(self, args: list[str]) -> str:
        flags, rest = self._split(args, "rfRv")
        if not rest:
            raise Usage("rm [-r] [-f] PATH...")
        for name in rest:
            path = self._ws.entry(name)
            if path == self._ws.root:
                raise Usage("refusing to remove the workspace itself")
            with self._about(path), self._ws.parent_of(path) as (fd, entry):
                try:
                    mode = os.stat(entry, dir_fd=fd, follow_symlinks=False).st_mode
                except FileNotFoundError:
                    if "f" in flags:
                        continue
                    raise
                if not stat.S_ISDIR(mode):
                    os.unlink(entry, dir_fd=fd)
                elif flags & {"r", "R"}:
                    shutil.rmtree(entry, dir_fd=fd)  # fd-based: refuses a swapped-in link
                else:
                    raise Usage(f"{name} is a directory (use -r)")
        return ""

    def _mkdir(self, args: list[str]) -> str:
        flags, rest = self._split(args, "p")
        for name in rest:
            path = self._ws.resolve(name)
            if path == self._ws.root and "p" in flags:
                continue
            with self._about(path), self._ws.parent_of(path, create="p" in flags) as (fd, new):
                try:
                    os.mkdir(new, dir_fd=fd)
                except FileExistsError:
                    mode = os.stat(new, dir_fd=fd, follow_symlinks=False).st_mode
                    if "p" not in flags or not stat.S_ISDIR(mode):
                        raise
        return ""

    def _touch(self, args: list[str]) -> str:
        for name in args:
            path = self._ws.resolve(name)
            if path == self._ws.root:
                with self._ws.directory(path) as fd:
                    os.utime(fd)
                continue
            with self._about(path), self._ws.parent_of(path) as (fd, entry):
                try:
                    os.utime(entry, dir_fd=fd, follow_symlinks=False)
                except FileNotFoundError:
                    os.close(os.open(entry, _NEW, 0o644, dir_fd=fd))
        return ""


def _ls_line(name: str, info: os.stat_result, long: bool) -> str:
    is_dir = stat.S_ISDIR(info.st_mode)
    if not long:
        return name + ("/" if is_dir else "")
    kind = "d" if is_dir else "l" if stat.S_ISLNK(info.st_mode) else "-"
    return f"{kind} {info.st_size:>10} {name}{'/' if is_dir else ''}"


def _grep_text(shown: str, data: bytes, pattern: re.Pattern[str], flags: set[str]) -> list[str]:
    text = data.decode("utf-8", errors="replace")
    found = [(n, line) for n, line in enumerate(text.splitlines(), 1) if pattern.search(line)]
    if "l" in flags:
        return [shown] if found else []
    return [f"{shown}:{n}:{line}" if "n" in flags else f"{shown}:{line}" for n, line in found]


def _write_copy(source: int, into: int, name: str) -> None:
    """Copy the open file `source` to `name` in directory `into`: a new file renamed over
    the old entry, so a link or hard link there is replaced, never written through."""
    info = os.fstat(source)
    temp = f".lancelot-{secrets.token_hex(6)}.tmp"
    handle = os.open(temp, _NEW, stat.S_IMODE(info.st_mode), dir_fd=into)
    try:
        os.lseek(source, 0, os.SEEK_SET)
        while block := os.read(source, 1 << 16):
            os.write(handle, block)
        os.utime(handle, ns=(info.st_atime_ns, info.st_mtime_ns))
        os.close(handle)
        handle = -1
        os.replace(temp, name, src_dir_fd=into, dst_dir_fd=into)
    except BaseException:
        if handle >= 0:
            os.close(handle)
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=into)
        raise


def _copy_tree(source: int, target: int, depth: int) -> None:
    """Copy the folder open as `source` into the (new, empty) folder open as `target`;
    symlinks are copied as symlinks, never followed."""
    if depth <= 0:
        raise OSError(errno.ELOOP, "folders nested too deeply to copy")
    with os.scandir(source) as entries:
        found = sorted(entries, key=lambda e: e.name)
    for entry in found:
        mode = entry.stat(follow_symlinks=False).st_mode
        if stat.S_ISLNK(mode):
            os.symlink(os.readlink(entry.name, dir_fd=source), entry.name, dir_fd=target)
        elif stat.S_ISDIR(mode):
            os.mkdir(entry.name, dir_fd=target)
            inner_source = os.open(entry.name, _DIR, dir_fd=source)
            try:
                inner_target = os.open(entry.name, _DIR, dir_fd=target)
                try:
                    _copy_tree(inner_source, inner_target, depth - 1)
                finally:
                    os.close(inner_target)
            finally:
                os.close(inner_source)
        elif stat.S_ISREG(mode):
            handle = os.open(entry.name, _READ, dir_fd=source)
            try:
                _write_copy(handle, target, entry.name)
            finally:
                os.close(handle)
