"""ShellEffects: run a shell command as a dry run, show its effects, apply exactly those,
undo them later. The one door the shell governance uses."""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import TracebackType

from core.errors import ToolFailed
from core.tools.action import ToolAction
from core.tools.base import ToolResult
from core.tools.capability import CapabilityTokens
from core.tools.effects.command import NotStarted, run_in_slot
from core.tools.effects.commit import commit
from core.tools.effects.effectset import EffectSet
from core.tools.effects.errors import (
    DigestMismatch,
    DryRunGone,
    StaleEffects,
    UndoRefused,
    UndoUnavailable,
)
from core.tools.effects.files import DirHandles
from core.tools.effects.journal import EffectJournal
from core.tools.effects.model import Effect
from core.tools.effects.objects import ObjectStore
from core.tools.effects.overlay import OverlaySlot, SlotFactory
from core.tools.effects.pool import SlotPool
from core.tools.effects.records import HOST_PREFIX, Change, DryRun
from core.tools.effects.scan import scan_upper
from core.tools.effects.sources import ObjectSource, UpperSource
from core.tools.effects.stage import ContentSource, Plan, abandon, prepare
from core.tools.effects.tree import remove_tree
from core.tools.effects.upkeep import Upkeep
from core.tools.sandbox.engine import DockerEngine
from core.tools.sandbox.limits import SandboxLimits
from core.tools.workspace import Workspace

# What a host change's maker returns: its effects, and where their new contents come from.
Planned = tuple[Sequence[Effect], ContentSource]


@dataclass(frozen=True, slots=True)
class EffectSettings:
    """How many dry-run containers wait ready, how long a dry run waits for a decision, how
    long a change can be undone, and the bounds of the undo backups."""

    pool_size: int = 2
    dry_run_ttl_seconds: float = 3600.0
    undo_window_seconds: float = 24 * 3600.0
    backup_max_bytes: int = 1 << 30
    backup_max_age_seconds: float = 7 * 24 * 3600.0


class ShellEffects:
    """Dry runs in a copy-on-write workspace, and their apply, discard and undo.

    An async context manager: entering opens LANCELOT_HOME/effects.db and cleans up after a
    previous run (expired dry runs, leftover containers); leaving removes every container.
    Dry runs still pending survive a restart: `apply` works on them from a new instance.
    """

    def __init__(
        self,
        engine: DockerEngine,
        workspace: Workspace,
        home: Path,
        capabilities: CapabilityTokens,
        limits: SandboxLimits,
        settings: EffectSettings | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.settings = settings or EffectSettings()
        self.limits = limits
        self._engine = engine
        self._root = workspace.root
        self._runs = home / "dryruns"
        self._capabilities = capabilities
        self._clock = clock
        self._journal = EffectJournal(home / "effects.db")
        self._store = ObjectStore(home / "undo" / "objects")
        factory = SlotFactory(engine, workspace.root, self._runs, limits)
        self.pool = SlotPool(factory, self.settings.pool_size)
        self._upkeep = Upkeep(
            self._journal,
            self._store,
            self._runs,
            self._root,
            self.settings,
            factory.sweep_if_marked,
        )
        self._lock = asyncio.Lock()  # one apply or undo at a time

    @property
    def engine(self) -> DockerEngine:
        """The Docker engine its dry runs use (the sandbox shares it)."""
        return self._engine

    async def __aenter__(self) -> ShellEffects:
        await self._journal.open()
        try:
            await self._upkeep.startup(self._clock())
        except BaseException:
            await self._journal.close()
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.pool.close()
        await self._journal.close()

    async def health(self) -> str | None:
        """None if dry runs can run now, else why not (engine down, image missing)."""
        return await asyncio.to_thread(self._engine.usable, self.limits.image)

    async def warm(self) -> None:
        """Start preparing containers now rather than at the first command."""
        await self.pool.start()

    async def dry_run(self, action: ToolAction, capability: str | None) -> DryRun:
        """Run `action.command` against an overlay of the workspace (after checking its
        capability token) and compute its effects. The workspace itself is not touched.

        A dry run that changed nothing comes back with state "unchanged" and is not kept;
        any other is kept, "pending", until applied, discarded or expired.
        SandboxUnavailable: nothing ran.
        """
        self._capabilities.check(capability, action.digest)
        command = action.command or ""
        slot, result = await self._take_and_run(command)
        keep = False
        try:
            effects = await asyncio.to_thread(
                scan_upper, slot.upper, self._root, self.pool.factory.opaque_xattr
            )
            now = self._clock()
            if effects.empty:
                return DryRun(slot.id, command, now, now, result, effects, "unchanged")
            run = DryRun(
                slot.id, command, now, now + self.settings.dry_run_ttl_seconds, result, effects
            )
            await self._journal.add_dry_run(run)
            keep = True
            return run
        finally:
            self.pool.dispose(slot, keep_upper=keep)

    async def _take_and_run(self, command: str) -> tuple[OverlaySlot, ToolResult]:
        """A slot and the command's result in it; a slot whose container died before the
        command started is replaced once."""
        for attempt in range(2):
            slot = await self.pool.take()
            try:
                result = await run_in_slot(self._engine, slot, command, self.limits.timeout_seconds)
            except NotStarted:
                self.pool.dispose(slot, keep_upper=False)
                if attempt:
                    raise
                continue
            except BaseException:
                self.pool.dispose(slot, keep_upper=False)
                raise
            return slot, result
        raise AssertionError("unreachable")

    async def get(self, dry_run_id: str) -> DryRun | None:
        """A kept dry run (also one made before a restart)."""
        return await self._journal.dry_run(dry_run_id)

    async def apply(self, dry_run_id: str, digest: str) -> Change:
        """Commit the dry run's upper layer to the workspace: exactly the effects hashing to
        `digest` (what the owner approved), after backing up what they overwrite or delete.
        Nothing runs again. StaleEffects when any path is not exactly as the dry run found it
        (already deleted, or something new in its place): nothing is applied and the dry run
        is dropped, "stale" (run the command again)."""
        async with self._lock:
            run = await self._pending(dry_run_id)
            if run.effects.digest != digest:
                raise DigestMismatch(dry_run_id)
            plan = await self._plan_from_upper(run)
            now = self._clock()
            change = Change(
                run.id, run.command, now, now + self.settings.undo_window_seconds, run.effects
            )
            try:
                await self._journal.begin_change(replace(change, state="applying"), plan.objects)
            except BaseException:
                await asyncio.to_thread(abandon, self._root, plan)
                raise
            written = await self._commit(run, plan)
            change = replace(change, effects=EffectSet(written, run.effects.git))
            await self._journal.finish_change(run.id, change.effects)
        await asyncio.to_thread(remove_tree, self._runs / run.id)
        return change

    async def apply_host(self, label: str, make: Callable[[DirHandles], Planned]) -> Change:
        """Apply a change Lancelot makes itself (a file tool's write, delete or move) through
        the same journal as a dry run: `make` reads the workspace and returns the effects and
        where their new contents come from; what they overwrite or delete is backed up first,
        so /undo can take the change back. ToolFailed when a path changed while it was
        being read."""
        async with self._lock:
            change_id = f"{HOST_PREFIX}{secrets.token_hex(8)}"

            def plan() -> tuple[EffectSet, Plan]:
                with DirHandles(self._root) as handles:
                    effects, source = make(handles)
                    ordered = tuple(sorted(effects, key=_by_path))
                    return EffectSet(ordered), prepare(self._root, ordered, source, self._store)

            try:
                effects, staged = await asyncio.to_thread(plan)
            except StaleEffects as exc:
                raise ToolFailed(
                    f"{', '.join(exc.paths)} changed while the change was prepared; "
                    "nothing was changed"
                ) from None
            now = self._clock()
            change = Change(change_id, label, now, now + self.settings.undo_window_seconds, effects)
            try:
                await self._journal.begin_change(replace(change, state="applying"), staged.objects)
            except BaseException:
                await asyncio.to_thread(abandon, self._root, staged)
                raise
            try:
                written = await asyncio.to_thread(commit, self._root, staged)
            except OSError as exc:
                await self._journal.finish_change(change_id, effects)
                raise ToolFailed(
                    f"{label} stopped part way ({exc}); /undo restores what was changed"
                ) from None
            change = replace(change, effects=EffectSet(written))
            await self._journal.finish_change(change_id, change.effects)
        return change

    async def _plan_from_upper(self, run: DryRun) -> Plan:
        upper = self._runs / run.id / "upper"
        if not upper.is_dir():
            await self._journal.settle_dry_run(run.id, "discarded")
            raise DryRunGone(run.id, "lost its dry-run copy")

        def plan() -> Plan:
            with UpperSource(upper) as source:
                return prepare(self._root, run.effects.effects, source, self._store)

        try:
            return await asyncio.to_thread(plan)
        except StaleEffects:
            await self._drop(run.id, "stale")
            raise
        except OSError as exc:
            raise ToolFailed(
                f"the change could not be prepared: {exc}",
                user_message="The change could not be prepared; nothing was changed.",
            ) from None

    async def _commit(self, run: DryRun, plan: Plan) -> tuple[Effect, ...]:
        try:
            return await asyncio.to_thread(commit, self._root, plan)
        except OSError as exc:
            # Some paths may have changed: the change is kept as applied, so undo can take
            # them back (it skips each path still as it was).
            await self._journal.finish_change(run.id, run.effects)
            raise ToolFailed(
                f"applying stopped part way ({exc}); undo restores what was changed",
                user_message="The change was applied only in part; Undo takes it back.",
            ) from None

    async def _pending(self, dry_run_id: str) -> DryRun:
        run = await self._journal.dry_run(dry_run_id)
        if run is None:
            raise DryRunGone(dry_run_id, "is unknown")
        if run.state != "pending":
            raise DryRunGone(dry_run_id, f"was already {run.state}")
        if run.expires_at <= self._clock():
            await self._journal.settle_dry_run(dry_run_id, "expired")
            await asyncio.to_thread(remove_tree, self._runs / dry_run_id)
            raise DryRunGone(dry_run_id, "has expired")
        return run

    async def discard(self, dry_run_id: str) -> None:
        """Drop a pending dry run (Deny): its upper layer goes, the workspace is untouched."""
        await self._drop(dry_run_id, "discarded")

    async def _drop(self, dry_run_id: str, state: str) -> None:
        await self._journal.settle_dry_run(dry_run_id, state)
        await asyncio.to_thread(remove_tree, self._runs / dry_run_id)

    async def undo(self, change_id: str) -> Change:
        """Put every path the change touched back as it was. UndoRefused names the paths a
        later change touched; UndoUnavailable when the window passed or it was undone."""
        async with self._lock:
            change = await self._journal.change(change_id)
            if change is None:
                raise UndoUnavailable(change_id, "that change is unknown")
            if change.state not in ("applied", "applying"):
                raise UndoUnavailable(change_id, f"it was already {change.state}")
            if change.undo_until <= self._clock():
                raise UndoUnavailable(change_id, "the time to undo it has passed")
            inverse = tuple(effect.inverse() for effect in reversed(change.effects.effects))
            try:
                plan = await asyncio.to_thread(
                    prepare,
                    self._root,
                    sorted(inverse, key=_by_path),
                    ObjectSource(self._store),
                    None,
                    resume=True,
                )
            except StaleEffects as exc:
                raise UndoRefused(exc.paths) from None
            except FileNotFoundError:
                raise UndoUnavailable(change_id, "its backups are gone") from None
            except OSError as exc:
                raise ToolFailed(f"the undo could not be prepared: {exc}") from None
            try:
                await asyncio.to_thread(commit, self._root, plan)
            except OSError as exc:  # what was restored stays; a second undo does the rest
                raise ToolFailed(f"the undo stopped part way ({exc}); try it again") from None
            orphans = await self._journal.settle_change(change_id, "undone")
        await asyncio.to_thread(self._upkeep.drop_objects, orphans)
        return replace(change, state="undone")

    async def recent_changes(self, limit: int = 10) -> list[Change]:
        """Changes that can still be undone, newest first (for /undo)."""
        return await self._journal.recent_changes(self._clock(), limit)

    async def tidy(self) -> None:
        """Expire old dry runs and prune the backups (call it now and then; entering does)."""
        async with self._lock:
            await self._upkeep.run(self._clock())


def _by_path(effect: Effect) -> str:
    return effect.path
