"""Versions on disk: the ACTIVE pointers, activation guarded by lint, and clean fallbacks."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from soul import SoulError, SoulRejected, SoulStore
from tests.soul.texts import edit


def v2_of(v1_text: str) -> str:
    text = edit(v1_text, "version: 1\n", "version: 2\n")
    return edit(text, "timeout_minutes: 30", "timeout_minutes: 45")


def snapshot(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def test_shipped_pointer_gives_v1(store: SoulStore) -> None:
    soul = store.load_active()
    assert soul.version == 1
    assert store.versions() == [1]
    assert store.active_version() == 1
    assert store.fallback_reason is None


def test_activating_a_new_version_writes_state_only_and_survives_restart(
    store: SoulStore, shipped: Path, state: Path, v1_text: str
) -> None:
    before = snapshot(shipped)
    soul = store.activate(2, text=v2_of(v1_text))
    assert soul.approval_rules.timeout_minutes == 45
    assert snapshot(shipped) == before  # the package directory is never written
    assert (state / "ACTIVE").read_text() == "2\n"
    assert sorted(p.name for p in state.iterdir()) == ["ACTIVE", "soul_v2.yaml"]  # no temp files

    restarted = SoulStore(shipped, state)
    assert restarted.versions() == [1, 2]
    assert restarted.load_active().approval_rules.timeout_minutes == 45


def test_state_pointer_overrides_the_shipped_one(
    store: SoulStore, shipped: Path, state: Path, v1_text: str
) -> None:
    store.activate(2, text=v2_of(v1_text))
    store.activate(1)  # roll back: the state pointer now names a shipped version
    assert (shipped / "ACTIVE").read_text().strip() == "1"
    assert (state / "ACTIVE").read_text() == "1\n"
    assert SoulStore(shipped, state).load_active().version == 1
    store.activate(2)
    assert SoulStore(shipped, state).load_active().version == 2


def test_a_version_failing_lint_is_never_activated(
    store: SoulStore, state: Path, v1_text: str
) -> None:
    store.activate(2, text=v2_of(v1_text))
    bad = edit(v1_text, "version: 1\n", "version: 3\n")
    bad = edit(bad, "allow_autonomous_irreversible: false", "allow_autonomous_irreversible: true")
    with pytest.raises(SoulRejected) as caught:
        store.activate(3, text=bad)
    assert "no-autonomous-irreversible" in str(caught.value)
    assert [f.check for f in caught.value.report.critical] == ["no-autonomous-irreversible"]
    assert not (state / "soul_v3.yaml").exists()
    assert store.load_active().version == 2
    assert store.versions() == [1, 2]


def test_an_existing_broken_version_is_not_activated(
    store: SoulStore, state: Path, v1_text: str
) -> None:
    store.activate(2, text=v2_of(v1_text))
    broken = edit(v1_text, "version: 1\n", "version: 3\n")
    (state / "soul_v3.yaml").write_text(
        edit(broken, "channels: [telegram, gchat, console]", "channels: []")
    )
    with pytest.raises(SoulRejected):
        store.activate(3)
    assert (state / "ACTIVE").read_text() == "2\n"


def test_the_declared_version_must_match_the_number(store: SoulStore, v1_text: str) -> None:
    with pytest.raises(SoulRejected) as caught:
        store.activate(2, text=v1_text)  # still says version: 1
    assert [f.check for f in caught.value.report.critical] == ["version-number"]
    assert str(caught.value) == (
        "soul_v2.yaml rejected: version-number: the document says version 1, the file is v2"
        " (at version)"
    )
    assert store.load_active().version == 1


def test_an_existing_number_cannot_be_rewritten(store: SoulStore, v1_text: str) -> None:
    with pytest.raises(SoulError, match="already exists"):
        store.activate(1, text=v1_text)


def test_unknown_version_cannot_be_activated_or_read(store: SoulStore) -> None:
    with pytest.raises(SoulError, match="does not exist"):
        store.activate(7)
    with pytest.raises(SoulError, match="does not exist"):
        store.get(7)


@pytest.mark.parametrize("pointer", ["garbage\n", "", "9\n", "-1", "2.0"])
def test_corrupted_state_pointer_falls_back_to_newest_valid_version(
    store: SoulStore, shipped: Path, state: Path, v1_text: str, pointer: str
) -> None:
    store.activate(2, text=v2_of(v1_text))
    broken_v3 = edit(v1_text, "version: 1\n", "version: 3\n")
    (state / "soul_v3.yaml").write_text(broken_v3.replace("memory_ethics:", "memory_ethic:"))
    (state / "ACTIVE").write_text(pointer)

    restarted = SoulStore(shipped, state)
    assert restarted.load_active().version == 2  # v3 is newer but broken
    reason = restarted.fallback_reason
    assert reason is not None
    assert "ACTIVE" in reason
    assert "v2" in reason
    assert "\n" not in reason


def test_broken_active_file_raises_a_one_line_error(store: SoulStore, shipped: Path) -> None:
    (shipped / "soul_v1.yaml").write_text("version: 1\nname: [unclosed\n")
    with pytest.raises(SoulError) as caught:
        store.load_active()
    message = str(caught.value)
    assert "\n" not in message
    assert "soul_v1.yaml" in message
    assert "yaml-syntax" in message


def test_broken_shipped_pointer_raises(store: SoulStore, shipped: Path) -> None:
    (shipped / "ACTIVE").write_text("one")
    with pytest.raises(SoulError, match="does not hold a version number"):
        store.load_active()
    (shipped / "ACTIVE").unlink()
    with pytest.raises(SoulError, match="no ACTIVE pointer"):
        store.load_active()


def test_state_pointer_broken_and_nothing_valid_raises(
    store: SoulStore, shipped: Path, state: Path
) -> None:
    (shipped / "soul_v1.yaml").write_text("version: 1\n")
    state.mkdir(parents=True)
    (state / "ACTIVE").write_text("x")
    with pytest.raises(SoulError, match="no valid version"):
        store.load_active()


def test_a_stored_version_that_parses_but_breaks_a_rule_is_not_served(
    store: SoulStore, state: Path, v1_text: str
) -> None:
    state.mkdir(parents=True)
    unsafe = edit(v2_of(v1_text), *IRREVERSIBLE_ALLOWED)
    (state / "soul_v2.yaml").write_text(unsafe)
    with pytest.raises(SoulError) as caught:
        store.get(2)
    assert str(caught.value).startswith("soul_v2.yaml is broken: no-autonomous-irreversible")
    assert store.load_active().version == 1


IRREVERSIBLE_ALLOWED = (
    "allow_autonomous_irreversible: false",
    "allow_autonomous_irreversible: true",
)


def test_a_version_file_that_is_not_text_is_named(store: SoulStore, state: Path) -> None:
    state.mkdir(parents=True)
    (state / "soul_v2.yaml").write_bytes(b"version: 2\nname: \xff\xfe\n")
    with pytest.raises(SoulError, match=r"soul_v2\.yaml cannot be read: 'utf-8' codec"):
        store.text(2)


def test_an_unreadable_state_pointer_falls_back_and_says_why_in_the_log(
    store: SoulStore, shipped: Path, state: Path, v1_text: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="soul.store"):
        store.activate(2, text=v2_of(v1_text))
    assert caplog.messages == ["soul: version 2 is now active"]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="soul.store"):
        assert SoulStore(shipped, state).active_version() == 2
    assert caplog.messages == []  # a sound pointer: nothing to warn of
    (state / "ACTIVE").write_bytes(b"\xff2\n")
    restarted = SoulStore(shipped, state)
    with caplog.at_level(logging.WARNING, logger="soul.store"):
        assert restarted.active_version() == 2
    reason = restarted.fallback_reason
    assert reason is not None
    assert "ACTIVE cannot be read ('utf-8' codec" in reason
    assert reason.endswith("; using the newest valid v2")
    assert caplog.messages == [f"soul: {reason}"]


def test_a_rejection_names_the_first_problem_and_counts_the_rest(
    store: SoulStore, v1_text: str
) -> None:
    unsafe = edit(v2_of(v1_text), *IRREVERSIBLE_ALLOWED)
    unsafe = edit(unsafe, "forbid_silent_degradation: true", "forbid_silent_degradation: false")
    with pytest.raises(SoulRejected) as caught:
        store.activate(2, text=unsafe)
    first = caught.value.report.critical[0].describe()
    assert len(caught.value.report.critical) == 2
    assert str(caught.value) == f"soul_v2.yaml rejected: {first} (+1 more)"
    with pytest.raises(SoulRejected) as one:
        store.activate(2, text=edit(v2_of(v1_text), *IRREVERSIBLE_ALLOWED))
    assert str(one.value) == (f"soul_v2.yaml rejected: {one.value.report.critical[0].describe()}")
