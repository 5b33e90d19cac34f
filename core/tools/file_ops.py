"""FileOps: read, atomic write, list, delete and move inside the workspace, with file hashes."""

from __future__ import annotations

import asyncio
import hashlib
import os
import secrets
import shutil
import stat
from collections.abc import Callable
from typing import Any

from core.errors import PolicyDenied, ToolFailed
from core.tools.action import ToolAction
from core.tools.base import ToolResult, bounded
from core.tools.capability import CapabilityTokens
from core.tools.oserrors import tool_failure
from core.tools.workspace import Workspace

CAPABILITIES = ("file.read", "file.write", "file.list", "file.delete", "file.move")
MAX_READ = 1 << 20
MAX_ENTRIES = 2000
_FILE_NOFOLLOW = os.O_RDONLY | os.O_NOFOLLOW

Params = dict[str, Any]


def text_param(params: Params, key: str, default: str | None = None) -> str:
    """A string parameter, or ToolFailed naming it."""
    value = params.get(key, default)
    if not isinstance(value, str):
        raise ToolFailed(f"parameter {key!r} must be text")
    return value


def _hash_at(fd: int, name: str) -> str | None:
    """sha256 of the regular file `name` in directory `fd`; None for anything else."""
    try:
        handle = os.open(name, _FILE_NOFOLLOW, dir_fd=fd)
    except OSError:
        return None
    with os.fdopen(handle, "rb") as file:
        if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
            return None
        digest = hashlib.sha256()
        for block in iter(lambda: file.read(1 << 16), b""):
            digest.update(block)
        return digest.hexdigest()


def file_action(workspace: Workspace, capability: str, params: Params) -> ToolAction:
    """A file.* action with the facts governance needs (in the workspace? overwriting?); the
    facts win over any parameter of the same name, so a caller cannot vouch for itself.
    Raises ToolFailed when the path cannot even be looked at (a name over 255 bytes)."""
    target = params.get("target", params.get("path"))
    facts: Params = {"in_workspace": True}
    if isinstance(target, str):
        try:
            facts["overwrites"] = workspace.resolve(target).is_file()
        except PolicyDenied:
            facts["in_workspace"] = False
        except OSError as exc:
            raise tool_failure(exc, f"{capability} {target}") from None
    return ToolAction(capability, None, {**params, **facts})


def _target(action: ToolAction) -> str:
    """`file.write /workspace/x`: the capability and the path it names, for a message."""
    params = action.params
    path = params.get("target", params.get("path", ""))
    return f"{action.capability} {path}".strip()


class FileOps:
    """The file.* capabilities. Every path goes through the workspace guard, and then through
    directory fds opened without following symlinks, so a swap after the check lands nowhere."""

    name = "file_ops"

    def __init__(self, workspace: Workspace, capabilities: CapabilityTokens) -> None:
        self._ws = workspace
        self._capabilities = capabilities
        self._ops: dict[str, Callable[[Params], ToolResult]] = {
            "file.read": self._read,
            "file.write": self._write,
            "file.list": self._list,
            "file.delete": self._delete,
            "file.move": self._move,
        }

    def action(self, capability: str, **params: Any) -> ToolAction:
        """An action with the facts governance needs (in the workspace? overwriting?)."""
        return file_action(self._ws, capability, params)

    async def run(self, action: ToolAction, capability: str | None) -> ToolResult:
        """Run one file action after checking its capability token."""
        self._capabilities.check(capability, action.digest)
        op = self._ops.get(action.capability)
        if op is None:
            raise ToolFailed(f"FileOps does not serve {action.capability}")
        try:
            return await asyncio.to_thread(op, action.params)
        except FileNotFoundError:
            return ToolResult(1, f"{action.capability}: no such file or directory")
        except OSError as exc:  # the owner reads why; the turn goes on
            raise tool_failure(exc, _target(action)) from None

    def _read(self, params: Params) -> ToolResult:
        real = self._ws.resolve(text_param(params, "path"))
        with self._ws.parent_of(real) as (fd, name):
            handle = os.open(name, _FILE_NOFOLLOW, dir_fd=fd)
            with os.fdopen(handle, "rb") as file:
                if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
                    return ToolResult(1, f"{self._ws.display(real)} is not a file")
                data = file.read(MAX_READ + 1)
        text, cut = bounded(data[:MAX_READ].decode("utf-8", errors="replace"))
        return ToolResult(0, text, cut or len(data) > MAX_READ)

    def _write(self, params: Params) -> ToolResult:
        """Temp file, fsync, rename over, fsync the directory: all or nothing."""
        real = self._ws.resolve(text_param(params, "path"))
        data = text_param(params, "content").encode("utf-8")
        with self._ws.parent_of(real, create=True) as (fd, name):
            temp = f".{name}.{secrets.token_hex(4)}.tmp"
            handle = os.open(
                temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644, dir_fd=fd
            )
            try:
                with os.fdopen(handle, "wb") as file:
                    file.write(data)
                    file.flush()
                    os.fsync(file.fileno())
                os.replace(temp, name, src_dir_fd=fd, dst_dir_fd=fd)
            except BaseException:
                os.unlink(temp, dir_fd=fd)
                raise
            os.fsync(fd)
        shown = self._ws.display(real)
        sha = hashlib.sha256(data).hexdigest()
        return ToolResult(0, f"wrote {len(data)} bytes to {shown}", file_changes={shown: sha})

    def _list(self, params: Params) -> ToolResult:
        real = self._ws.resolve(text_param(params, "path", "/workspace"))
        lines: list[str] = []
        with self._ws.directory(real) as fd:
            if params.get("recursive"):
                for top, dirs, files, top_fd in os.fwalk(".", dir_fd=fd):
                    prefix = "" if top == "." else top.removeprefix("./") + "/"
                    lines += [f"{prefix}{d}/" for d in sorted(dirs)]
                    lines += [self._entry(top_fd, f, prefix) for f in sorted(files)]
                    if len(lines) >= MAX_ENTRIES:
                        break
            else:
                with os.scandir(fd) as entries:
                    for entry in sorted(entries, key=lambda e: e.name):
                        is_dir = entry.is_dir(follow_symlinks=False)
                        lines.append(f"{entry.name}/" if is_dir else self._entry(fd, entry.name))
        text, cut = bounded("\n".join(sorted(lines)[:MAX_ENTRIES]))
        return ToolResult(0, text, cut or len(lines) > MAX_ENTRIES)

    @staticmethod
    def _entry(fd: int, name: str, prefix: str = "") -> str:
        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        arrow = " -> (link)" if stat.S_ISLNK(info.st_mode) else ""
        return f"{prefix}{name}  {info.st_size} bytes{arrow}"

    def _delete(self, params: Params) -> ToolResult:
        real = self._ws.resolve(text_param(params, "path"))
        shown = self._ws.display(real)
        with self._ws.parent_of(real) as (fd, name):
            info = os.stat(name, dir_fd=fd, follow_symlinks=False)
            if stat.S_ISDIR(info.st_mode):
                if not params.get("recursive"):
                    return ToolResult(1, f"{shown} is a directory (set recursive to delete it)")
                shutil.rmtree(name, dir_fd=fd)  # fd-based: immune to symlink tricks
            else:
                os.unlink(name, dir_fd=fd)
            os.fsync(fd)
        return ToolResult(0, f"deleted {shown}", file_changes={shown: None})

    def _move(self, params: Params) -> ToolResult:
        source = self._ws.resolve(text_param(params, "source"))
        target = self._ws.resolve(text_param(params, "target"))
        if target.is_dir():
            return ToolResult(1, f"{self._ws.display(target)} is a directory; name the new path")
        if params.get("overwrites") is False and target.exists():
            # Governance judged this move on "nothing is replaced"; that no longer holds.
            raise ToolFailed(f"{self._ws.display(target)} appeared since this was decided")
        with (
            self._ws.parent_of(source) as (sfd, sname),
            self._ws.parent_of(target, create=True) as (tfd, tname),
        ):
            os.stat(sname, dir_fd=sfd, follow_symlinks=False)  # FileNotFoundError if missing
            os.rename(sname, tname, src_dir_fd=sfd, dst_dir_fd=tfd)
            sha = _hash_at(tfd, tname)
        shown = self._ws.display(target)
        changes = {self._ws.display(source): None, shown: sha}
        return ToolResult(0, f"moved to {shown}", file_changes=changes)
