"""A command judged by what it does: the tier of its effect set, from the Soul's
`risk_rules.effects`."""

from __future__ import annotations

import pytest

from soul.effects import EFFECT_KINDS, classify_effects
from soul.schema import Soul


def test_every_kind_the_soul_rates_is_known() -> None:
    assert EFFECT_KINDS[:3] == ("creates", "moves", "overwrites")
    assert "git_config" in EFFECT_KINDS


def test_nothing_done_is_t0_and_each_kind_counts_once(v1: Soul) -> None:
    nothing = classify_effects(v1, [])
    assert (nothing.tier, nothing.kinds, nothing.rule_ids) == ("T0", ("shell.exec",), ())
    made = classify_effects(v1, ["creates", "creates"])
    assert made.tier == v1.risk_rules.effects.creates == "T1"
    assert made.kinds == ("shell.exec", "effect.creates")
    assert made.rule_ids == ("effects.creates",)


def test_the_highest_tier_among_the_kinds_present_wins(v1: Soul) -> None:
    found = classify_effects(v1, ["creates", "symlinks", "git_index"])
    assert found.tier == "T2"
    assert found.rule_ids == ("effects.creates", "effects.symlinks", "effects.git_index")
    assert classify_effects(v1, ["creates", "deletes"]).tier == "T3"


def test_an_effect_the_soul_has_no_tier_for_is_never_waved_on(v1: Soul) -> None:
    with pytest.raises(ValueError, match=r"^the Soul has no tier for the effect kind\(s\) "):
        classify_effects(v1, ["creates", "teleports", "melts"])
    with pytest.raises(ValueError, match=r"kind\(s\) teleports, melts$"):
        classify_effects(v1, ["teleports", "melts"])
