"""Applied changes and kept dry runs in memory, as the effect engine keeps them, for the
Undo desk and the approval flow's follow-ups without a sandbox (the engine needs Docker)."""

from __future__ import annotations

from dataclasses import replace

from core.tools.action import ToolAction
from core.tools.base import ToolResult
from core.tools.effects import Effect, EffectSet, FileState, UndoRefused, UndoUnavailable
from core.tools.effects.model import ABSENT
from core.tools.effects.records import Change, DryRun

NOW = 1_800_000_000.0  # 2027-01-15 08:00 UTC
DAY = 86_400.0


class Clock:
    """The one clock of the desk, its tokens and the owner's view."""

    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> float:
        return self.now


class Shelf:
    """Applied changes kept in memory as ShellEffects keeps them: newest first, each taken
    back once; `touched_later` names the files a later change touched, per change."""

    def __init__(self, *changes: Change) -> None:
        self.changes = list(changes)
        self.touched_later: dict[str, tuple[str, ...]] = {}

    async def recent_changes(self, limit: int = 10) -> list[Change]:
        return [c for c in self.changes if c.state == "applied"][:limit]

    async def undo(self, change_id: str) -> Change:
        for n, change in enumerate(self.changes):
            if change.id != change_id:
                continue
            if change_id in self.touched_later:
                raise UndoRefused(self.touched_later[change_id])
            if change.state != "applied":
                raise UndoUnavailable(change_id, "already undone")
            self.changes[n] = replace(change, state="undone")
            return self.changes[n]
        raise UndoUnavailable(change_id, "no such change")


def deleted(n: int, left: float = DAY) -> Change:
    """Change d<n>: `rm old<n>.txt`, applied n minutes ago, undoable for `left` seconds."""
    gone = Effect(f"old{n}.txt", FileState("file", 0o644, 5, "f" * 64), ABSENT)
    return Change(f"d{n}", f"rm old{n}.txt", NOW - 60 * n, NOW + left, EffectSet((gone,)))


class Kept:
    """Dry runs kept in memory, as the effect engine keeps them until applied or dropped;
    `stale_ids`: those dropped at their apply because the workspace had moved."""

    def __init__(self) -> None:
        self.runs: dict[str, DryRun] = {}
        self.stale_ids: set[str] = set()

    async def visible(self) -> bool:
        return True

    async def dry_run(self, action: ToolAction, capability: str | None) -> DryRun:
        made = DryRun(
            f"d{len(self.runs) + 1}", str(action.command), NOW, NOW + 600, ToolResult(0, ""),
            EffectSet(),
        )  # fmt: skip
        self.runs[made.id] = made
        return made

    async def discard(self, dry_run_id: str) -> None:
        self.runs.pop(dry_run_id, None)

    async def stale(self, dry_run_id: str) -> bool:
        return dry_run_id in self.stale_ids
