"""SafeREPL's commands that change the workspace: cp, mv, rm, mkdir and touch, and the
descriptor-based copy behind cp (a symlink is copied as a symlink, never written through)."""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
import stat

from core.tools.repl_paths import DIR, NEW, READ, Usage, about, inside, is_dir, opened, split_flags
from core.tools.workspace import Workspace

MAX_DEPTH = 64  # cp -r goes no deeper (each level holds two descriptors)


def cp(ws: Workspace, args: list[str]) -> str:
    """cp [-r] SOURCE TARGET"""
    flags, rest = split_flags(args, "r")
    if len(rest) != 2:
        raise Usage("cp [-r] SOURCE TARGET")
    source, target = ws.resolve(rest[0]), ws.entry(rest[1])
    with about(ws, source):
        if is_dir(ws, target):
            target = inside(ws, target, source.name)
        if target == source:
            raise Usage(f"{rest[0]} and {rest[1]} are the same file")
        if not is_dir(ws, source):
            with opened(ws, source) as fd, ws.parent_of(target) as (into, name):
                _write_copy(fd, into, name)
            return ""
        if "r" not in flags:
            raise Usage(f"{rest[0]} is a directory (use -r)")
        if target.is_relative_to(source):
            raise Usage(f"cannot copy {rest[0]} into itself")
        with ws.directory(source) as fd, ws.parent_of(target) as (into, name):
            os.mkdir(name, dir_fd=into)
            copy = os.open(name, DIR, dir_fd=into)
            try:
                _copy_tree(fd, copy, MAX_DEPTH)
            finally:
                os.close(copy)
    return ""


def mv(ws: Workspace, args: list[str]) -> str:
    """mv SOURCE TARGET"""
    if len(args) != 2:
        raise Usage("mv SOURCE TARGET")
    source, target = ws.entry(args[0]), ws.entry(args[1])
    with about(ws, source):
        if is_dir(ws, target):
            target = inside(ws, target, source.name)
        with (
            ws.parent_of(source) as (sfd, sname),
            ws.parent_of(target) as (
                tfd,
                tname,
            ),
        ):
            os.stat(sname, dir_fd=sfd, follow_symlinks=False)  # it must exist
            os.rename(sname, tname, src_dir_fd=sfd, dst_dir_fd=tfd)
    return ""


def rm(ws: Workspace, args: list[str]) -> str:
    """rm [-r] [-f] PATH..."""
    flags, rest = split_flags(args, "rfRv")
    if not rest:
        raise Usage("rm [-r] [-f] PATH...")
    for name in rest:
        path = ws.entry(name)
        if path == ws.root:
            raise Usage("refusing to remove the workspace itself")
        with about(ws, path), ws.parent_of(path) as (fd, entry):
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


def mkdir(ws: Workspace, args: list[str]) -> str:
    """mkdir [-p] PATH..."""
    flags, rest = split_flags(args, "p")
    for name in rest:
        path = ws.resolve(name)
        if path == ws.root and "p" in flags:
            continue
        with about(ws, path), ws.parent_of(path, create="p" in flags) as (fd, new):
            try:
                os.mkdir(new, dir_fd=fd)
            except FileExistsError:
                mode = os.stat(new, dir_fd=fd, follow_symlinks=False).st_mode
                if "p" not in flags or not stat.S_ISDIR(mode):
                    raise
    return ""


def touch(ws: Workspace, args: list[str]) -> str:
    """touch PATH..."""
    for name in args:
        path = ws.resolve(name)
        if path == ws.root:
            with ws.directory(path) as fd:
                os.utime(fd)
            continue
        with about(ws, path), ws.parent_of(path) as (fd, entry):
            try:
                os.utime(entry, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                os.close(os.open(entry, NEW, 0o644, dir_fd=fd))
    return ""


def _write_copy(source: int, into: int, name: str) -> None:
    """Copy the open file `source` to `name` in directory `into`: a new file renamed over
    the old entry, so a link or hard link there is replaced, never written through."""
    info = os.fstat(source)
    temp = f".lancelot-{secrets.token_hex(6)}.tmp"
    handle = os.open(temp, NEW, stat.S_IMODE(info.st_mode), dir_fd=into)
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
            inner_source = os.open(entry.name, DIR, dir_fd=source)
            try:
                inner_target = os.open(entry.name, DIR, dir_fd=target)
                try:
                    _copy_tree(inner_source, inner_target, depth - 1)
                finally:
                    os.close(inner_target)
            finally:
                os.close(inner_source)
        elif stat.S_ISREG(mode):
            handle = os.open(entry.name, READ, dir_fd=source)
            try:
                _write_copy(handle, target, entry.name)
            finally:
                os.close(handle)
