"""FileOps: read, atomic write, list, delete and move inside the workspace, with file hashes."""

from __future__ import annotations

import asyncio
import hashlib
import os
import secrets
import shutil
import stat
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

from core.errors import PolicyDenied, ToolFailed
from core.tools.action import ToolAction
from core.tools.base import ToolResult, bounded
from core.tools.capability import CapabilityTokens
from core.tools.effects.files import DirHandles
from core.tools.effects.host import (
    BytesSource,
    MovedSource,
    TreeTooLarge,
    delete_effects,
    move_effects,
    write_effects,
)
from core.tools.effects.model import Effect
from core.tools.effects.records import Change
from core.tools.effects.stage import ContentSource
from core.tools.oserrors import tool_failure
from core.tools.workspace import Workspace

CAPABILITIES = ("file.read", "file.write", "file.list", "file.delete", "file.move")
JOURNALED = ("file.write", "file.delete", "file.move")  # the ones /undo can take back
MAX_READ = 1 << 20
MAX_ENTRIES = 2000
_FILE_NOFOLLOW = os.O_RDONLY | os.O_NOFOLLOW

Params = dict[str, Any]
Planned = tuple[Sequence[Effect], ContentSource]


class HostChanges(Protocol):
    """The change journal (core.tools.effects.ShellEffects): applies a change with a backup of
    what it overwrites or deletes, so /undo can take it back."""

    def apply_host(self, label: str, make: Callable[[DirHandles], Planned]) -> Awaitable[Change]:
        """Apply the effects `make` reads from the workspace; the change as applied."""
        ...


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


def _still_as_decided(params: Params, effect: Effect, shown: str) -> None:
    """Governance decided on "nothing is replaced": refuse when something now is."""
    if params.get("overwrites") is False and effect.before.exists:
        raise ToolFailed(f"{shown} appeared since this was decided; nothing was changed")


def _target(action: ToolAction) -> str:
    """`file.write /workspace/x`: the capability and the path it names, for a message."""
    params = action.params
    path = params.get("target", params.get("path", ""))
    return f"{action.capability} {path}".strip()


class FileOps:
    """The file.* capabilities. Every path goes through the workspace guard, and then through
    directory fds opened without following symlinks, so a swap after the check lands nowhere."""

    name = "file_ops"

    def __init__(
        self,
        workspace: Workspace,
        capabilities: CapabilityTokens,
        changes: HostChanges | None = None,
    ) -> None:
        self._ws = workspace
        self._capabilities = capabilities
        self._changes = changes  # with it, writes, deletes and moves can be undone
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
            if self._changes is not None and action.capability in JOURNALED:
                return await self._journaled(self._changes, action)
            return await asyncio.to_thread(op, action.params)
        except FileNotFoundError:
            return ToolResult(1, f"{action.capability}: no such file or directory")
        except OSError as exc:  # the owner reads why; the turn goes on
            raise tool_failure(exc, _target(action)) from None

    async def _journaled(self, changes: HostChanges, action: ToolAction) -> ToolResult:
        """A write, delete or move through the change journal: what it overwrites or
        deletes is backed up first, and /undo takes it back."""
        params = action.params
        try:
            if action.capability == "file.write":
                return await self._write_journaled(changes, params)
            if action.capability == "file.delete":
                return await self._delete_journaled(changes, params)
            return await self._move_journaled(changes, params)
        except TreeTooLarge as exc:
            raise ToolFailed(f"{_target(action)}: {exc}; nothing was changed") from None

    def _relative(self, real: Path) -> str:
        return real.relative_to(self._ws.root).as_posix()

    async def _write_journaled(self, changes: HostChanges, params: Params) -> ToolResult:
        real = self._ws.resolve(text_param(params, "path"))
        data = text_param(params, "content").encode("utf-8")
        path, shown = self._relative(real), self._ws.display(real)

        def make(handles: DirHandles) -> Planned:
            effects = write_effects(handles, path, data)
            _still_as_decided(params, effects[-1], shown)
            return effects, BytesSource({path: data})

        change = await changes.apply_host(f"write {shown}", make)
        sha = hashlib.sha256(data).hexdigest()
        return ToolResult(
            0, f"wrote {len(data)} bytes to {shown}", file_changes={shown: sha}, change_id=change.id
        )

    async def _delete_journaled(self, changes: HostChanges, params: Params) -> ToolResult:
        real = self._ws.resolve(text_param(params, "path"))
        path, shown = self._relative(real), self._ws.display(real)
        if real.is_dir() and not real.is_symlink() and not params.get("recursive"):
            return ToolResult(1, f"{shown} is a directory (set recursive to delete it)")

        def make(handles: DirHandles) -> Planned:
            effects = delete_effects(handles, path)
            if not effects[0].before.exists:
                raise FileNotFoundError(shown)
            return effects, BytesSource({})

        change = await changes.apply_host(f"delete {shown}", make)
        return ToolResult(0, f"deleted {shown}", file_changes={shown: None}, change_id=change.id)

    async def _move_journaled(self, changes: HostChanges, params: Params) -> ToolResult:
        source = self._ws.resolve(text_param(params, "source"))
        target = self._ws.resolve(text_param(params, "target"))
        old, new = self._relative(source), self._relative(target)
        shown = self._ws.display(target)
        if target.is_dir():
            return ToolResult(1, f"{shown} is a directory; name the new path")
        if new == old or new.startswith(old + "/"):
            return ToolResult(1, f"{shown} is {self._ws.display(source)} itself or inside it")

        def make(handles: DirHandles) -> Planned:
            effects, origins = move_effects(handles, old, new)
            if not effects[0].before.exists:
                raise FileNotFoundError(self._ws.display(source))
            moved_to = next(e for e in effects if e.path == new)
            _still_as_decided(params, moved_to, shown)
            return effects, MovedSource(handles, origins)

        change = await changes.apply_host(f"move {self._ws.display(source)} to {shown}", make)
        sha = next((e.after.sha256 for e in change.effects.effects if e.path == new), None)
        changed = {self._ws.display(source): None, shown: sha}
        return ToolResult(0, f"moved to {shown}", file_changes=changed, change_id=change.id)

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
