"""FEATURE_* kill switches."""

from __future__ import annotations

from core.features import FeatureFlags


def test_truthy_and_falsy_words_in_any_case() -> None:
    env = {"FEATURE_SOUL": "No", "FEATURE_TOOLS_NETWORK": "YES", "FEATURE_SKILLS": "0"}
    flags = FeatureFlags(env)
    assert not flags.enabled("SOUL")
    assert flags.enabled("FEATURE_TOOLS_NETWORK")
    assert not flags.enabled("skills")


def test_risky_powers_default_off_and_unknown_is_off() -> None:
    flags = FeatureFlags({})
    assert not flags.enabled("TOOLS_HOST_EXECUTION")
    assert flags.enabled("SOUL")
    assert not flags.enabled("NO_SUCH_FLAG")


def test_reload_picks_up_changes_and_reports_them() -> None:
    env = {"FEATURE_SOUL": "true"}
    flags = FeatureFlags(env)
    env["FEATURE_SOUL"] = "false"
    env["FEATURE_TOOLS_NETWORK"] = "1"
    changed = flags.reload()
    assert changed == {"SOUL": False, "TOOLS_NETWORK": True}
    assert not flags.enabled("SOUL")


def test_garbage_values_keep_the_default() -> None:
    flags = FeatureFlags({"FEATURE_SOUL": "maybe"})
    assert flags.enabled("SOUL")
