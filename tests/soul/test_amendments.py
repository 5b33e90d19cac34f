"""Amendments: lint at the door, the owner's approval, activation as a new version, restarts."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from soul import (
    AmendmentError,
    AmendmentNotFound,
    AmendmentStatus,
    InvalidTransition,
    SoulRejected,
    SoulStore,
    StaleAmendment,
    amendments,
)
from tests.soul.texts import edit

PENDING, APPROVED = AmendmentStatus.PENDING, AmendmentStatus.APPROVED
ACTIVATED, REJECTED = AmendmentStatus.ACTIVATED, AmendmentStatus.REJECTED


def longer_timeout(v1_text: str, minutes: int = 45) -> str:
    return edit(v1_text, "timeout_minutes: 30", f"timeout_minutes: {minutes}")


def test_lifecycle_writes_v2_and_survives_a_restart(
    store: SoulStore, shipped: Path, state: Path, v1_text: str
) -> None:
    proposed = amendments.propose(store, longer_timeout(v1_text), note="more time to answer")
    assert proposed.status is PENDING
    assert proposed.base_version == 1
    assert store.load_active().version == 1  # proposing changes nothing

    approved = amendments.approve(store, proposed.id)
    assert approved.status is APPROVED
    assert approved.decided_at is not None
    assert store.load_active().version == 1  # approving changes nothing either

    done = amendments.activate(store, proposed.id)
    assert done.status is ACTIVATED
    assert done.activated_version == 2
    assert done.decided_at == approved.decided_at  # when the owner agreed, kept
    assert done.activated_at is not None
    assert approved.decided_at is not None
    assert done.activated_at >= approved.decided_at
    assert (state / "soul_v2.yaml").is_file()

    restarted = SoulStore(shipped, state)
    soul = restarted.load_active()
    assert (soul.version, soul.approval_rules.timeout_minutes) == (2, 45)
    again = amendments.load(restarted, proposed.id)
    assert again == done
    assert again.note == "more time to answer"


def test_proposal_gets_the_next_version_number(store: SoulStore, v1_text: str) -> None:
    proposed = amendments.propose(store, longer_timeout(v1_text))
    assert "version: 2\n" in proposed.proposed_yaml
    assert "version: 1\n" not in proposed.proposed_yaml


def test_diff_shows_the_changed_lines(store: SoulStore, v1_text: str) -> None:
    proposed = amendments.propose(store, longer_timeout(v1_text))
    text = amendments.diff(proposed)
    changed = [
        line
        for line in text.splitlines()
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]
    assert changed == [
        "-version: 1",
        "+version: 2",
        "-  timeout_minutes: 30",
        "+  timeout_minutes: 45",
    ]
    assert text.startswith("--- soul_v1.yaml\n+++ amendment ")


def test_a_proposal_failing_lint_is_rejected_at_once(
    store: SoulStore, state: Path, v1_text: str
) -> None:
    bad = edit(v1_text, "forbid_silent_degradation: true", "forbid_silent_degradation: false")
    proposed = amendments.propose(store, bad)
    assert (proposed.status, proposed.note) == (REJECTED, "rejected by the linter")
    assert any("no-silent-degradation" in f for f in proposed.findings)
    assert amendments.load(store, proposed.id).status is REJECTED  # recorded, for the audit
    with pytest.raises(InvalidTransition):
        amendments.approve(store, proposed.id)
    assert not (state / "soul_v2.yaml").exists()


def test_a_proposal_that_changes_nothing_is_rejected(store: SoulStore, v1_text: str) -> None:
    proposed = amendments.propose(store, v1_text)
    assert proposed.status is REJECTED
    assert proposed.note == "proposes no change"


def test_layout_comments_and_the_version_are_not_a_change(store: SoulStore, v1_text: str) -> None:
    # The same soul dumped again by a YAML library: no comments, other quoting and order.
    relaid = yaml.safe_dump(yaml.safe_load(v1_text), sort_keys=True, width=60)
    proposed = amendments.propose(store, relaid.replace("version: 1", "version: 9"))
    assert proposed.status is REJECTED
    assert proposed.note == "proposes no change"
    assert amendments.propose(store, longer_timeout(v1_text)).status is not REJECTED


def test_a_stale_amendment_is_refused(store: SoulStore, v1_text: str) -> None:
    first = amendments.propose(store, longer_timeout(v1_text, 45))
    second = amendments.propose(store, longer_timeout(v1_text, 60))
    amendments.approve(store, first.id)
    amendments.approve(store, second.id)
    amendments.activate(store, first.id)

    with pytest.raises(StaleAmendment, match="v1"):
        amendments.activate(store, second.id)
    assert amendments.load(store, second.id).status is APPROVED
    assert store.load_active().approval_rules.timeout_minutes == 45
    assert store.versions() == [1, 2]


def test_after_a_rollback_the_next_version_never_overwrites(store: SoulStore, v1_text: str) -> None:
    first = amendments.propose(store, longer_timeout(v1_text, 45))
    amendments.approve(store, first.id)
    amendments.activate(store, first.id)
    store.activate(1)  # the owner rolls back

    second = amendments.propose(store, longer_timeout(v1_text, 60))
    amendments.approve(store, second.id)
    done = amendments.activate(store, second.id)
    assert done.activated_version == 3
    assert store.get(2).approval_rules.timeout_minutes == 45
    assert store.load_active().approval_rules.timeout_minutes == 60


def test_invalid_transitions_are_refused(store: SoulStore, v1_text: str) -> None:
    pending = amendments.propose(store, longer_timeout(v1_text))
    with pytest.raises(InvalidTransition, match="PENDING"):
        amendments.activate(store, pending.id)

    amendments.approve(store, pending.id)
    with pytest.raises(InvalidTransition):
        amendments.approve(store, pending.id)
    amendments.activate(store, pending.id)
    for step in (amendments.approve, amendments.reject, amendments.activate):
        with pytest.raises(InvalidTransition, match="ACTIVATED"):
            step(store, pending.id)

    declined = amendments.propose(store, longer_timeout(v1_text, 60))
    assert amendments.reject(store, declined.id, note="not now").status is REJECTED
    for step in (amendments.approve, amendments.reject, amendments.activate):
        with pytest.raises(InvalidTransition, match="REJECTED"):
            step(store, declined.id)


def test_an_approved_amendment_can_still_be_rejected(store: SoulStore, v1_text: str) -> None:
    proposed = amendments.propose(store, longer_timeout(v1_text))
    amendments.approve(store, proposed.id)
    rejected = amendments.reject(store, proposed.id, note="changed my mind")
    assert (rejected.status, rejected.note) == (REJECTED, "changed my mind")
    assert store.load_active().version == 1


def test_activation_lints_again(store: SoulStore, state: Path, v1_text: str) -> None:
    proposed = amendments.propose(store, longer_timeout(v1_text))
    amendments.approve(store, proposed.id)
    # The file is altered behind the store's back (or the linter grew stricter since).
    path = state / "amendments" / f"{proposed.id}.json"
    record = json.loads(path.read_text())
    record["proposed_yaml"] = edit(
        record["proposed_yaml"], "channels: [telegram, gchat, console]", "channels: []"
    )
    path.write_text(json.dumps(record))

    with pytest.raises(SoulRejected):
        amendments.activate(store, proposed.id)
    after = amendments.load(store, proposed.id)
    assert (after.status, after.note) == (REJECTED, "failed lint on activation")
    assert any("approval-channel" in f for f in after.findings)
    assert store.load_active().version == 1
    assert store.versions() == [1]


@pytest.mark.parametrize("bad_id", ["0123456789ab", "../../etc/passwd", "", "ABCDEF012345"])
def test_unknown_or_malformed_ids_are_not_found(store: SoulStore, bad_id: str) -> None:
    with pytest.raises(AmendmentNotFound):
        amendments.load(store, bad_id)


def test_listing_is_oldest_first_and_skips_unreadable_files(
    store: SoulStore, state: Path, v1_text: str, caplog: pytest.LogCaptureFixture
) -> None:
    first = amendments.propose(store, longer_timeout(v1_text, 45))
    second = amendments.propose(store, longer_timeout(v1_text, 60))
    (state / "amendments" / "ffffffffffff.json").write_text("{not json")
    with caplog.at_level(logging.WARNING, logger="soul.amendments"):
        assert [a.id for a in amendments.list_amendments(store)] == [first.id, second.id]
    [skipped] = caplog.messages
    assert skipped.startswith(
        "soul: skipping ffffffffffff.json: amendment ffffffffffff is unreadable"
    )


def test_a_refused_step_names_both_states_in_words(store: SoulStore, v1_text: str) -> None:
    first = amendments.propose(store, longer_timeout(v1_text, 45))
    with pytest.raises(InvalidTransition) as pending:
        amendments.activate(store, first.id)
    amendments.approve(store, first.id)
    with pytest.raises(InvalidTransition) as approved:
        amendments.approve(store, first.id)
    amendments.activate(store, first.id)
    with pytest.raises(InvalidTransition) as activated:
        amendments.reject(store, first.id)
    second = amendments.reject(store, amendments.propose(store, longer_timeout(v1_text, 60)).id)
    with pytest.raises(InvalidTransition) as rejected:
        amendments.approve(store, second.id)
    assert [str(e.value) for e in (pending, approved, activated)] == [
        f"amendment {first.id} is PENDING; it cannot become ACTIVATED",
        f"amendment {first.id} is APPROVED; it cannot become APPROVED",
        f"amendment {first.id} is ACTIVATED; it cannot become REJECTED",
    ]
    assert str(rejected.value) == f"amendment {second.id} is REJECTED; it cannot become APPROVED"
    assert second.note == ""  # proposed and rejected with no word from anyone


def test_a_record_with_a_field_it_does_not_know_is_unreadable(
    store: SoulStore, state: Path, v1_text: str
) -> None:
    proposed = amendments.propose(store, longer_timeout(v1_text))
    path = state / "amendments" / f"{proposed.id}.json"
    record = json.loads(path.read_text())
    path.write_text(json.dumps({**record, "approved_by": "someone"}))
    with pytest.raises(AmendmentError, match=f"amendment {proposed.id} is unreadable"):
        amendments.load(store, proposed.id)


def test_an_amendment_is_a_value_no_one_changes_in_place(store: SoulStore, v1_text: str) -> None:
    proposed = amendments.propose(store, longer_timeout(v1_text))
    with pytest.raises(ValidationError, match="frozen"):
        proposed.status = APPROVED
    assert amendments.load(store, proposed.id).status is PENDING


def test_an_id_cannot_reach_a_record_outside_the_queue(
    store: SoulStore, state: Path, v1_text: str
) -> None:
    proposed = amendments.propose(store, longer_timeout(v1_text))
    record = (state / "amendments" / f"{proposed.id}.json").read_text()
    (state / "outside.json").write_text(record)  # a genuine record, in the wrong place
    with pytest.raises(AmendmentNotFound) as refused:
        amendments.load(store, "../outside")
    assert str(refused.value) == "no amendment '../outside'"
    with pytest.raises(AmendmentNotFound) as long:
        amendments.load(store, "x" * 100)
    assert str(long.value) == f"no amendment {'x' * 40!r}"


def test_a_text_that_is_no_mapping_means_what_it_says() -> None:
    # /soul shows what a proposal changes through `meaning`, before any lint.
    assert amendments.meaning("- version\n- name\n") == ["version", "name"]
    assert amendments.meaning("just words") == "just words"
    assert amendments.meaning("version: 3\nname: x\n") == {"name": "x"}


def test_an_amendment_activated_after_another_records_the_text_it_became(
    store: SoulStore, v1_text: str
) -> None:
    first = amendments.propose(store, longer_timeout(v1_text, 45))
    second = amendments.propose(store, longer_timeout(v1_text, 60))
    assert "version: 2\n" in second.proposed_yaml  # v2 was the next free number then
    amendments.approve(store, first.id)
    amendments.activate(store, first.id)
    store.activate(1)  # the owner rolls back: the second is written against v1 again
    amendments.approve(store, second.id)
    done = amendments.activate(store, second.id)
    assert done.activated_version == 3
    assert done.proposed_yaml == store.text(3)
    assert amendments.load(store, second.id).proposed_yaml == store.text(3)
