"""FEATURE_* kill switches."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.features import FeatureError, FeatureFlags, settings_file


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


def test_a_value_that_is_neither_on_nor_off_is_an_error_naming_it() -> None:
    with pytest.raises(FeatureError, match=r"the environment: FEATURE_AGENT='maybe' is neither"):
        FeatureFlags({"FEATURE_AGENT": "maybe"})


def test_an_unknown_name_in_the_environment_is_ignored_but_in_a_file_is_an_error(
    tmp_path: Path,
) -> None:
    assert FeatureFlags({"FEATURE_CRUSADR": "false"}).enabled("CRUSADER")
    store = tmp_path / "features.env"
    store.write_text("FEATURE_CRUSADR=false\n")
    with pytest.raises(FeatureError, match="did you mean FEATURE_CRUSADER"):
        FeatureFlags({}, store=store)


def test_settings_file_then_environment_then_features_env(tmp_path: Path) -> None:
    config = tmp_path / "lancelot.yaml"
    config.write_text("features:\n  crusader: false\n  agent: false\n  scheduler: false\n")
    store = tmp_path / "features.env"
    store.write_text("# the owner's\nFEATURE_SCHEDULER=on\n")
    flags = FeatureFlags(
        {"FEATURE_AGENT": "yes"}, sources=[(str(config), settings_file(config))], store=store
    )
    assert not flags.enabled("CRUSADER")
    assert flags.origin("CRUSADER") == str(config)
    assert flags.enabled("AGENT")
    assert flags.origin("AGENT") == "the environment"
    assert flags.enabled("SCHEDULER")
    assert flags.origin("SCHEDULER") == str(store)
    assert flags.origin("MEMORY") == "default"


def test_set_keeps_the_choice_for_the_next_start_in_a_private_file(tmp_path: Path) -> None:
    store = tmp_path / "home" / "features.env"
    flags = FeatureFlags({"FEATURE_CRUSADER": "true"}, store=store)
    flags.set("crusader", False)
    flags.set("TOOLS_NETWORK", True)
    flags.set("crusader", False)  # once in the file, however often it is set
    assert not flags.enabled("CRUSADER")
    assert store.stat().st_mode & 0o777 == 0o600
    assert store.read_text().count("FEATURE_CRUSADER=") == 1
    again = FeatureFlags({"FEATURE_CRUSADER": "true"}, store=store)
    assert not again.enabled("CRUSADER")
    assert again.enabled("TOOLS_NETWORK")
    with pytest.raises(FeatureError):
        again.set("NO_SUCH", True)


def test_a_bad_file_on_reload_changes_nothing(tmp_path: Path) -> None:
    store = tmp_path / "features.env"
    store.write_text("FEATURE_AGENT=false\n")
    flags = FeatureFlags({}, store=store)
    store.write_text("FEATURE_AGENT=true\nFEATURE_SOUL=perhaps\n")
    with pytest.raises(FeatureError, match="FEATURE_SOUL='perhaps'"):
        flags.reload()
    assert not flags.enabled("AGENT")


@pytest.mark.parametrize(
    ("spec", "ours"),
    [("MEMORY_VNEXT", "MEMORY"), ("HEALTH_MONITOR", "HEALTH"), ("AGENTIC_LOOP", "AGENT")],
)
def test_a_specification_name_switches_what_lancelot_calls_it(
    spec: str, ours: str, tmp_path: Path
) -> None:
    assert not FeatureFlags({f"FEATURE_{spec}": "false"}).enabled(ours)
    config = tmp_path / "lancelot.yaml"
    config.write_text(f"features:\n  {spec.lower()}: false\n")
    from_file = FeatureFlags({}, sources=[(str(config), settings_file(config))])
    assert not from_file.enabled(ours)
    assert from_file.origin(ours) == str(config)


def test_the_owner_can_toggle_a_switch_by_its_specification_name(tmp_path: Path) -> None:
    flags = FeatureFlags({}, store=tmp_path / "features.env")
    flags.set("FEATURE_MEMORY_VNEXT", False)
    assert not flags.enabled("MEMORY")
    assert "FEATURE_MEMORY=false" in (tmp_path / "features.env").read_text()


def test_turning_off_a_specification_switch_with_no_counterpart_stops_with_what_to_use() -> None:
    with pytest.raises(FeatureError, match=r"FEATURE_TOOLS_FABRIC=off does nothing.*SAFE_MODE"):
        FeatureFlags({"FEATURE_TOOLS_FABRIC": "false"})
    assert FeatureFlags({"FEATURE_TOOLS_FABRIC": "true"}).enabled("SOUL")
