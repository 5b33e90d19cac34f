"""The shape of a soul: the defaults a soul that leaves a key out gets, and the bounds each
key is held to (a soul outside them is refused before it can govern anything)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from soul.schema import (
    DESTRUCTIVE_EFFECTS,
    TIERS,
    DenyRule,
    EffectRules,
    QuietHours,
    RiskRule,
    RuleMatch,
    Soul,
    tier_rank,
)


def minimal(**changes: Any) -> dict[str, Any]:
    """A soul with only the keys it must have; `changes` replace top-level keys."""
    soul: dict[str, Any] = {
        "version": 1,
        "name": "L",
        "mission": "m",
        "allegiance": {"owner": "o"},
        "autonomy_posture": {"level": "guided"},
        "risk_rules": {"tiers": {t: t.lower() for t in TIERS}},
        "requires_approval": [],
        "destructive_actions": [],
        "approval_rules": {"escalation": {"after_minutes": 1, "action": "remind"}},
        "tone_invariants": [],
        "forbid_silent_degradation": True,
        "memory_ethics": [],
        "scheduling_boundaries": {
            "allow_autonomous_irreversible": False,
            "max_tier_without_approval": "T1",
        },
    }
    return soul | changes


def test_a_soul_that_leaves_keys_out_gets_the_careful_defaults() -> None:
    soul = Soul.model_validate(minimal())
    assert soul.risk_rules.default_tier == "T2"
    assert (soul.risk_rules.rules, soul.risk_rules.denylist, soul.risk_rules.mcp) == ((), (), {})
    assert soul.approval_rules.timeout_minutes == 30
    assert soul.approval_rules.channels == ()
    assert (soul.crusader.auto_approve_tiers, soul.crusader.max_duration_minutes) == ((), 60)
    flow = soul.flow_rules
    assert (flow.private_egress, flow.stranger_changes, flow.stranger_memory) == (
        "ask",
        "ask",
        "quarantine",
    )
    described = (soul.allegiance, soul.autonomy_posture, soul.scheduling_boundaries)
    assert [p.description for p in (*described, soul.crusader, flow)] == [""] * 5
    assert soul.scheduling_boundaries.quiet_hours is None
    assert QuietHours(start="22:00", end="07:00").timezone == "UTC"
    assert RiskRule(id="r", capability="c", tier="T1").description == ""


def test_each_effect_has_its_default_tier_and_what_destroys_is_t3() -> None:
    assert EffectRules().model_dump() == {
        "creates": "T1",
        "moves": "T1",
        "overwrites": "T3",
        "deletes": "T3",
        "mode_changes": "T3",
        "symlinks": "T2",
        "git_refs_created": "T1",
        "git_refs_moved": "T2",
        "git_refs_deleted": "T3",
        "git_history_lost": "T3",
        "git_refs_broken": "T3",
        "git_index": "T1",
        "git_config": "T3",
    }
    assert DESTRUCTIVE_EFFECTS == (
        "overwrites",
        "deletes",
        "mode_changes",
        "git_refs_deleted",
        "git_history_lost",
        "git_refs_broken",
        "git_config",
    )
    assert {getattr(EffectRules(), kind) for kind in DESTRUCTIVE_EFFECTS} == {"T3"}


def test_tiers_rank_in_order() -> None:
    assert [tier_rank(t) for t in TIERS] == [0, 1, 2, 3]
    for tier in TIERS:
        assert RiskRule(id="r", capability="c", tier=tier).tier == tier
    with pytest.raises(ValidationError):
        RiskRule(id="r", capability="c", tier="T4")


def test_every_http_method_and_channel_named_is_accepted() -> None:
    methods = ("GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE")
    assert RuleMatch(methods=methods).methods == methods
    with pytest.raises(ValidationError):
        RuleMatch(methods=("FETCH",))
    rules = {"escalation": {"after_minutes": 1, "action": "expire"}}
    channels = ["telegram", "gchat", "console"]
    soul = Soul.model_validate(minimal(approval_rules={**rules, "channels": channels}))
    assert soul.approval_rules.channels == tuple(channels)
    with pytest.raises(ValidationError):
        Soul.model_validate(minimal(approval_rules={**rules, "channels": ["email"]}))


@pytest.mark.parametrize("clock", ["00:00", "09:30", "19:59", "23:59"])
def test_a_clock_time_is_read(clock: str) -> None:
    assert QuietHours(start=clock, end=clock).start == clock


@pytest.mark.parametrize("clock", ["24:00", "9:30", "12:60", "12:5", "x12:00", "12:00 "])
def test_a_time_that_is_no_clock_time_is_refused(clock: str) -> None:
    with pytest.raises(ValidationError):
        QuietHours(start=clock, end="07:00")


@pytest.mark.parametrize(
    "changes",
    [
        {"version": 0},
        {"name": ""},
        {"mission": ""},
        {"allegiance": {"owner": ""}},
        {"approval_rules": {"escalation": {"after_minutes": 0, "action": "remind"}}},
        {
            "approval_rules": {
                "timeout_minutes": 0,
                "escalation": {"after_minutes": 1, "action": "remind"},
            }
        },
        {"crusader": {"max_duration_minutes": 0}},
        {
            "scheduling_boundaries": {
                "allow_autonomous_irreversible": False,
                "max_tier_without_approval": "T1",
                "quiet_hours": {"start": "22:00", "end": "07:00", "timezone": ""},
            }
        },
        {"surprise": 1},  # an unknown key
    ],
    ids=[
        "version",
        "name",
        "mission",
        "owner",
        "after",
        "timeout",
        "crusader",
        "timezone",
        "unknown",
    ],
)
def test_a_key_out_of_bounds_is_refused(changes: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        Soul.model_validate(minimal(**changes))


def test_the_bounds_themselves_are_accepted() -> None:
    rules = {"timeout_minutes": 1, "escalation": {"after_minutes": 1, "action": "remind"}}
    soul = Soul.model_validate(
        minimal(version=1, approval_rules=rules, crusader={"max_duration_minutes": 1})
    )
    assert (soul.version, soul.approval_rules.timeout_minutes) == (1, 1)
    assert soul.crusader.max_duration_minutes == 1


def test_rules_need_their_names_and_a_deny_rule_a_command_and_a_reason() -> None:
    for empty in ({"id": ""}, {"capability": ""}):
        with pytest.raises(ValidationError):
            RiskRule.model_validate({"id": "r", "capability": "c", "tier": "T1", **empty})
    assert DenyRule(id="d", commands=(("rm",),), reason="x").commands == (("rm",),)
    for bad in ({"id": ""}, {"commands": ()}, {"commands": ((),)}, {"reason": ""}):
        with pytest.raises(ValidationError):
            DenyRule.model_validate({"id": "d", "commands": [["rm"]], "reason": "no", **bad})


def test_a_soul_is_frozen() -> None:
    soul = Soul.model_validate(minimal())
    with pytest.raises(ValidationError):
        soul.name = "changed"  # type: ignore[misc]
