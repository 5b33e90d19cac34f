"""T1 rollback: a snapshot of what a reversible action touches, taken before it runs, a
verification after it, and a rollback of a quest's T1 steps when one fails verification.

A T1 step is verified in the background (the next step does not wait for it). Before any
T2 or T3 step the quest's pending verifications are drained: if one failed, the T1 steps
taken since the last T2/T3 step are rolled back, newest first, and the risky step does not
run. Each verification failure and each restored step is a receipt.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import shlex
import shutil
import tempfile
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from core.errors import PolicyDenied
from core.receipts.base import ReceiptStore
from core.receipts.model import Receipt, ReceiptStatus
from core.tools.action import ToolAction
from core.tools.base import ToolResult
from core.tools.workspace import MOUNT, Workspace

log = logging.getLogger(__name__)

PATH_PARAMS = ("path", "src", "dst", "source", "target", "destination")
MAX_SNAPSHOT_BYTES = 64 * 1024 * 1024  # larger targets are not snapshotted (and say so)

Verifier = Callable[[ToolAction, ToolResult], Coroutine[object, object, str | None]]


@dataclass
class _Saved:
    path: Path  # in the workspace
    copy: Path | None  # where its previous state was saved; None: it did not exist


@dataclass
class Snapshot:
    """What one T1 action may change, as it was before the action ran."""

    action: ToolAction
    quest_id: str | None
    folder: Path  # where the copies are kept
    saved: list[_Saved] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # too big to keep
    verification: asyncio.Task[str | None] | None = None


def touched_paths(action: ToolAction, workspace: Workspace) -> list[Path]:
    """The workspace paths an action names: command words and path-like parameters, a
    link and what it leads to. Names outside the workspace are left out (the tool refuses
    them anyway)."""
    names: list[str] = []
    if action.command is not None:
        try:
            words = shlex.split(action.command)
        except ValueError:
            words = []
        names += [w for w in words[1:] if w and not w.startswith("-")]
    for key in PATH_PARAMS:
        value = action.params.get(key)
        if isinstance(value, str):
            names.append(value)
    found: list[Path] = []
    for name in names:
        for path in _named(name, workspace):
            if path != workspace.root and path not in found:
                found.append(path)
    return found


def _named(name: str, workspace: Workspace) -> list[Path]:
    """The entry `name` names and, when it is a link, where the link leads: a step may
    replace the link itself (`rm link`) or write through it (`echo x > link`)."""
    paths: list[Path] = []
    for look in (workspace.entry, workspace.resolve):
        try:
            paths.append(look(name))
        except PolicyDenied:
            continue
    return paths


def _size(path: Path) -> int:
    if path.is_symlink() or not path.is_dir():
        return path.lstat().st_size
    return sum(p.lstat().st_size for p in path.rglob("*"))


def _save(path: Path, store: Path, index: int) -> _Saved | None:
    """Copy `path` aside; None when it is too big to keep."""
    if not path.exists() and not path.is_symlink():
        return _Saved(path, None)
    if _size(path) > MAX_SNAPSHOT_BYTES:
        return None
    copy = store / str(index)
    if path.is_symlink() or not path.is_dir():
        shutil.copy2(path, copy, follow_symlinks=False)
    else:
        shutil.copytree(path, copy, symlinks=True)
    return _Saved(path, copy)


def _remove(path: Path) -> None:
    if path.is_symlink() or (path.exists() and not path.is_dir()):
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)


def _restore(saved: list[_Saved]) -> None:
    for item in reversed(saved):
        _remove(item.path)
        if item.copy is None:
            continue
        item.path.parent.mkdir(parents=True, exist_ok=True)
        if item.copy.is_dir() and not item.copy.is_symlink():
            shutil.copytree(item.copy, item.path, symlinks=True)
        else:
            shutil.copy2(item.copy, item.path, follow_symlinks=False)


def _digest(path: Path) -> str | None:
    if not path.is_file():
        return None
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _reported(workspace: Workspace, name: str) -> Path | None:
    """The file behind a name a tool reported changing (/workspace/... or relative), or None
    when that name leads out of the workspace. The tool wrote that very name, so it is taken
    as spelled: not decoded or normalised as a name the owner or the model wrote would be
    (`a%20b.txt` is that file, not `a b.txt`)."""
    path = PurePosixPath(name)
    if path.is_absolute():
        if not path.is_relative_to(MOUNT):
            return None
        path = path.relative_to(MOUNT)
    real = workspace.root.joinpath(*path.parts).resolve(strict=False)
    return real if real.is_relative_to(workspace.root) else None


def default_verifier(workspace: Workspace) -> Verifier:
    """The check every T1 step gets: it succeeded, and the files it reports changing hold
    what it reported (nothing else changed them underneath)."""

    async def verify(action: ToolAction, result: ToolResult) -> str | None:
        if result.exit_code != 0:
            return f"exited with {result.exit_code}"
        for name, expected in result.file_changes.items():
            path = _reported(workspace, name)
            if path is None:
                return f"{name} is not a file in the workspace"
            actual = await asyncio.to_thread(_digest, path)
            if actual != expected:
                return f"{name} does not hold what the step wrote"
        return None

    return verify


class RollbackJournal:
    """Snapshots of T1 steps per quest, until a T2/T3 step (a barrier) commits them."""

    def __init__(
        self, workspace: Workspace, ledger: ReceiptStore, verifier: Verifier, store: Path
    ) -> None:
        self._workspace = workspace
        self._ledger = ledger
        self._verifier = verifier
        self._store = store
        self._quests: dict[str | None, list[Snapshot]] = {}

    @classmethod
    async def create(
        cls, workspace: Workspace, ledger: ReceiptStore, home: Path
    ) -> RollbackJournal:
        """A journal keeping its copies under home/snapshots (emptied at start: snapshots
        belong to steps of this run only)."""
        store = home / "snapshots"
        await asyncio.to_thread(shutil.rmtree, store, True)
        store.mkdir(parents=True, exist_ok=True)
        return cls(workspace, ledger, default_verifier(workspace), store)

    async def snapshot(self, action: ToolAction, quest_id: str | None) -> Snapshot:
        """Save what the action may change, before it runs."""
        paths = touched_paths(action, self._workspace)
        folder = Path(await asyncio.to_thread(tempfile.mkdtemp, dir=self._store))
        snap = Snapshot(action, quest_id, folder)
        for index, path in enumerate(paths):
            saved = await asyncio.to_thread(_save, path, folder, index)
            if saved is None:
                snap.skipped.append(self._workspace.display(path))
            else:
                snap.saved.append(saved)
        self._quests.setdefault(quest_id, []).append(snap)
        return snap

    def verify_later(self, snap: Snapshot, result: ToolResult) -> None:
        """Start the step's verification; barrier() collects it."""
        snap.verification = asyncio.create_task(
            self._verifier(snap.action, result), name="t1-verification"
        )

    async def barrier(self, quest_id: str | None) -> str | None:
        """Drain the quest's verifications. All passed: the snapshots are dropped and None is
        returned. One failed: its T1 steps are rolled back (receipts for each) and the
        reason is returned."""
        snaps = self._quests.pop(quest_id, [])
        failure: str | None = None
        for snap in snaps:
            reason = await self._outcome(snap)
            if reason is not None and failure is None:
                failure = f"{snap.action.describe()}: {reason}"
                self._receipt("verification_failed", snap, reason, ReceiptStatus.FAILURE)
        if failure is not None:
            for snap in reversed(snaps):
                await self._roll_back(snap)
        await asyncio.gather(*(self._discard(s) for s in snaps))
        return failure

    async def _outcome(self, snap: Snapshot) -> str | None:
        if snap.verification is None:
            return "was not verified"
        try:
            return await snap.verification
        except Exception as exc:  # a broken verifier fails the step, it does not crash us
            log.exception("verification of %s raised", snap.action.describe())
            return f"verification could not run ({type(exc).__name__})"

    async def _roll_back(self, snap: Snapshot) -> None:
        try:
            await asyncio.to_thread(_restore, snap.saved)
        except OSError as exc:
            log.exception("rollback of %s failed", snap.action.describe())
            self._receipt("rollback", snap, f"could not restore: {exc}", ReceiptStatus.FAILURE)
            return
        note = "restored"
        if snap.skipped:
            note += f"; too big to have been kept: {', '.join(snap.skipped)}"
        self._receipt("rollback", snap, note, ReceiptStatus.SUCCESS)

    @staticmethod
    async def _discard(snap: Snapshot) -> None:
        await asyncio.to_thread(shutil.rmtree, snap.folder, True)

    def _receipt(self, kind: str, snap: Snapshot, what: str, status: ReceiptStatus) -> None:
        self._ledger.append(
            Receipt(
                action_type=kind,
                action_name=snap.action.capability,
                inputs={
                    "command": snap.action.describe(),
                    "action_hash": snap.action.digest,
                    "paths": [self._workspace.display(s.path) for s in snap.saved],
                },
                outputs={"outcome": what},
                status=status,
                quest_id=snap.quest_id,
                metadata={"tier": "T1"},
            )
        )
