"""Shell governance by effect: every command runs as a dry run against a copy-on-write
overlay of the workspace; its effect set is what the Soul judges and the owner approves;
apply commits exactly that, and undo takes it back."""

from core.tools.effects.effectset import CATEGORIES, EffectSet
from core.tools.effects.errors import (
    DigestMismatch,
    DryRunGone,
    EffectsError,
    StaleEffects,
    UndoRefused,
    UndoUnavailable,
)
from core.tools.effects.model import Effect, FileState, GitChanges, RefChange
from core.tools.effects.records import Change, DryRun
from core.tools.effects.service import EffectSettings, ShellEffects

__all__ = [
    "CATEGORIES",
    "Change",
    "DigestMismatch",
    "DryRun",
    "DryRunGone",
    "Effect",
    "EffectSet",
    "EffectSettings",
    "EffectsError",
    "FileState",
    "GitChanges",
    "RefChange",
    "ShellEffects",
    "StaleEffects",
    "UndoRefused",
    "UndoUnavailable",
]
