"""Keeping the effect engine's disk use bounded: expired dry runs, leftovers of a previous
run, and undo backups past their age or over their size budget."""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from core.tools.effects.journal import EffectJournal
from core.tools.effects.objects import ObjectStore
from core.tools.effects.stage import STAGING_PREFIX
from core.tools.effects.tree import remove_tree

log = logging.getLogger(__name__)


class Bounds(Protocol):
    """The settings upkeep reads."""

    @property
    def backup_max_bytes(self) -> int: ...

    @property
    def backup_max_age_seconds(self) -> float: ...


class Upkeep:
    """Runs at startup (and whenever asked): nothing here is needed for correctness, only
    to keep LANCELOT_HOME from growing."""

    def __init__(
        self,
        journal: EffectJournal,
        store: ObjectStore,
        runs_dir: Path,
        workspace: Path,
        bounds: Bounds,
        sweep_engine: Callable[[], None],
    ) -> None:
        self._journal = journal
        self._store = store
        self._runs = runs_dir
        self._workspace = workspace
        self._bounds = bounds
        self._sweep_engine = sweep_engine

    async def startup(self, now: float) -> None:
        """After a restart: containers and directories nobody waits for go, a change a crash
        interrupted counts as applied (its undo checks every path), then `run`."""
        try:
            await asyncio.to_thread(self._sweep_engine)
        except Exception as exc:  # the engine may be down; the pool sweeps again later
            log.info("stale dry-run containers not checked: %s", exc)
        for change_id in await self._journal.interrupted_changes():
            await self._journal.mark_applied(change_id)
        pending = await self._journal.pending_dry_runs()  # those past their time: `run`'s
        await asyncio.to_thread(self._clear_dirs, pending)
        await self.run(now)

    async def run(self, now: float) -> None:
        """Expire dry runs past their time, release backups past their age or budget."""
        for dry_run_id in await self._journal.expire_dry_runs(now):
            await asyncio.to_thread(remove_tree, self._runs / dry_run_id)
        orphans = await self._prune(now)
        await asyncio.to_thread(self.drop_objects, orphans)
        await self._journal.forget_old(now - self._bounds.backup_max_age_seconds)

    async def _prune(self, now: float) -> list[str]:
        orphans: list[str] = []
        cutoff = now - self._bounds.backup_max_age_seconds
        for change_id in await self._journal.old_changes(cutoff):
            orphans += await self._journal.settle_change(change_id, "expired")
        held = await self._journal.held_backups()
        while held and _total(held) > self._bounds.backup_max_bytes:
            change_id, _, _ = held.pop(0)
            log.info("undo backups over budget: change %s can no longer be undone", change_id)
            orphans += await self._journal.settle_change(change_id, "expired")
        return orphans

    def drop_objects(self, shas: list[str]) -> None:
        """Delete backups no change holds any more (blocking)."""
        for sha in shas:
            self._store.remove(sha)

    def _clear_dirs(self, pending: set[str]) -> None:
        if self._runs.is_dir():
            for entry in self._runs.iterdir():
                if entry.name not in pending:
                    remove_tree(entry)
        for name in os.listdir(self._workspace):
            if name.startswith(STAGING_PREFIX):
                remove_tree(self._workspace / name)


def _total(held: list[tuple[str, float, dict[str, int]]]) -> int:
    sizes: dict[str, int] = {}
    for _, _, objects in held:
        sizes.update(objects)
    return sum(sizes.values())
