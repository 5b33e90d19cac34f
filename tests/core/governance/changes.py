"""Applied changes kept in memory, as the effect engine keeps them, for the Undo desk and
the approval flow's follow-ups without a sandbox (the engine's own tests need Docker)."""

from __future__ import annotations

from dataclasses import replace

from core.tools.effects import Effect, EffectSet, FileState, UndoRefused, UndoUnavailable
from core.tools.effects.model import ABSENT
from core.tools.effects.records import Change

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
