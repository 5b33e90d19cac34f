"""Judging a shell command by what it does: the tier of its effect set, from the Soul's
`risk_rules.effects` (the highest tier among the kinds of effect present wins)."""

from __future__ import annotations

from collections.abc import Iterable

from soul.rules import Classification
from soul.schema import EffectRules, Soul, Tier, tier_rank

EFFECT_KINDS: tuple[str, ...] = tuple(EffectRules.model_fields)


def classify_effects(soul: Soul, kinds: Iterable[str]) -> Classification:
    """The tier of an effect set whose non-empty categories are `kinds` (creates, deletes,
    git_refs_deleted, ...). No effect at all is T0. The action kinds it counts as are
    `effect.<kind>` (so `requires_approval` can name one), and the rules `effects.<kind>`.
    An unknown kind raises ValueError: an effect the Soul cannot judge is never waved on."""
    present = list(dict.fromkeys(kinds))
    unknown = [k for k in present if k not in EFFECT_KINDS]
    if unknown:
        raise ValueError(f"the Soul has no tier for the effect kind(s) {', '.join(unknown)}")
    rules = soul.risk_rules.effects
    tiers: list[Tier] = [getattr(rules, kind) for kind in present]
    tier: Tier = max(tiers, key=tier_rank) if tiers else "T0"
    return Classification(
        tier,
        ("shell.exec", *(f"effect.{kind}" for kind in present)),
        tuple(f"effects.{kind}" for kind in present),
    )
