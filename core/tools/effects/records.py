"""The dry runs and changes the effect engine keeps: what the wiring shows and acts on."""

from __future__ import annotations

from dataclasses import dataclass

from core.tools.base import ToolResult
from core.tools.effects.effectset import EffectSet


@dataclass(frozen=True, slots=True)
class DryRun:
    """A command run against an overlay: its output and the effects it would have. `state`:
    pending (waiting for apply or discard), applied, discarded, expired, stale (dropped at
    its apply: the workspace no longer matched it)."""

    id: str
    command: str
    created_at: float
    expires_at: float
    result: ToolResult
    effects: EffectSet
    state: str = "pending"


HOST_PREFIX = "h"  # the id of a change a file tool made (a dry run's id is hex)


@dataclass(frozen=True, slots=True)
class Change:
    """A dry run applied to the workspace (same id). `effects` hold the after states as they
    were written. `state`: applying (interrupted), applied, undone, expired."""

    id: str
    command: str
    applied_at: float
    undo_until: float
    effects: EffectSet
    state: str = "applied"

    @property
    def shown(self) -> str:
        """How the owner sees it named: the command line, or what a file tool did."""
        return self.command if self.id.startswith(HOST_PREFIX) else f"$ {self.command}"

    @property
    def summary(self) -> str:
        """What the change did, in the owner's words."""
        return self.effects.summary
