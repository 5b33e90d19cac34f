"""What can stop an apply or an undo, in words the owner can act on."""

from __future__ import annotations

from collections.abc import Sequence

from core.errors import PermanentError

SHOWN = 5


def _named(paths: Sequence[str]) -> str:
    shown = ", ".join(paths[:SHOWN])
    return f"{shown} and {len(paths) - SHOWN} more" if len(paths) > SHOWN else shown


class EffectsError(PermanentError):
    """Base of the effect engine's refusals: nothing was changed."""


class StaleEffects(EffectsError):
    """The workspace no longer matches a dry run: these paths are not what it saw."""

    def __init__(self, paths: Sequence[str]) -> None:
        self.paths = tuple(paths)
        text = f"the workspace no longer matches the dry run: {_named(self.paths)}"
        super().__init__(text, user_message=f"Not applied: {text}. Run the command again.")


class UndoRefused(EffectsError):
    """A later change touched files this undo would restore."""

    def __init__(self, paths: Sequence[str]) -> None:
        self.paths = tuple(paths)
        text = f"these files changed after it: {_named(self.paths)}"
        super().__init__(f"undo refused: {text}", user_message=f"Not undone: {text}.")


class DryRunGone(EffectsError):
    """The dry run is unknown, expired, already applied or discarded."""

    def __init__(self, dry_run_id: str, why: str) -> None:
        self.dry_run_id = dry_run_id
        self.why = why
        super().__init__(f"dry run {dry_run_id}: {why}", user_message=f"That change {why}.")


class DigestMismatch(EffectsError):
    """An apply named other effects than the dry run holds (the card is not this dry run's)."""

    def __init__(self, dry_run_id: str) -> None:
        super().__init__(
            f"dry run {dry_run_id}: the approved effects are not the dry run's",
            user_message="That approval does not match the change; nothing was applied.",
        )


class UndoUnavailable(EffectsError):
    """The change cannot be undone any more (window passed, already undone, backups pruned)."""

    def __init__(self, change_id: str, why: str) -> None:
        self.change_id = change_id
        self.why = why
        super().__init__(f"change {change_id}: {why}", user_message=f"Cannot undo: {why}.")
