"""A decision as its receipt records it, and its inputs read back from that record: every
field kept, and a damaged record refused with the field it names."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.governance.decision import Decision, DecisionInputs, InputsError, Verdict, soul_digest
from core.governance.replay import one_soul, replay
from core.receipts.model import StoredReceipt
from soul import SHIPPED_VERSIONS_DIR, Action, SoulStore

SOUL = SoulStore(SHIPPED_VERSIONS_DIR, Path("/nonexistent-state")).load_active()

INPUTS = DecisionInputs(
    Action("shell.exec", "mv a b", method="POST", in_workspace=True, overwrites=False),
    soul_version=3,
    soul_digest="0123456789abcdef",
    clock=1700000000.5,
    autonomous=True,
    crusader=True,
    tool_tier="T1",
    effects=("creates", "moves"),
    ask="the request read a web page",
    flow=("owner", "stranger"),
    chosen_tier="T2",
)


def recorded(**changes: Any) -> dict[str, Any]:
    """The receipt's record of INPUTS, as JSON gives it back, with `changes` made."""
    data: dict[str, Any] = json.loads(json.dumps(INPUTS.for_receipt()))
    data.update(changes)
    return data


def test_a_decision_is_recorded_without_its_token() -> None:
    decision = Decision(
        Verdict.ALLOW, "T1", ("shell-workspace-write",), ("file.write",), "why",
        alternatives=("other",), capability="secret-token", auto_approved=True,
    )  # fmt: skip
    assert decision.snapshot() == {
        "verdict": "allow",
        "tier": "T1",
        "rules": ["shell-workspace-write"],
        "kinds": ["file.write"],
        "reason": "why",
        "auto_approved": True,
    }


def test_the_inputs_read_back_as_they_were_recorded() -> None:
    data = recorded()
    assert data["action"] == {
        "capability": "shell.exec",
        "command": "mv a b",
        "method": "POST",
        "in_workspace": True,
        "overwrites": False,
    }
    assert DecisionInputs.from_receipt(data) == INPUTS
    bare = DecisionInputs(Action("file.read"), 1, "d", 5)
    again = DecisionInputs.from_receipt(json.loads(json.dumps(bare.for_receipt())))
    assert again == bare
    assert again.effects is None
    assert isinstance(again.clock, float)


def test_a_record_from_before_mcp_tiers_reads_with_no_choice() -> None:
    data = recorded()
    del data["chosen_tier"]
    assert DecisionInputs.from_receipt(data).chosen_tier is None


def test_a_record_with_no_flow_reads_as_an_empty_flow() -> None:
    assert DecisionInputs.from_receipt(recorded(flow=None)).flow == ()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("not a mapping", "the receipt records no decision inputs"),
        ({k: v for k, v in recorded().items() if k != "clock"}, "the recorded inputs lack 'clock'"),
        (recorded(action=["shell.exec"]), "the recorded action has no capability"),
        (recorded(action={"capability": 7}), "the recorded action has no capability"),
        (recorded(action={"capability": "x", "command": 7}), "the recorded command is 7"),
        (recorded(action={"capability": "x", "method": 7}), "the recorded method is 7"),
        (
            recorded(action={"capability": "x", "in_workspace": "yes"}),
            "the recorded in_workspace is 'yes'",
        ),
        (recorded(action={"capability": "x", "overwrites": 1}), "the recorded overwrites is 1"),
        (recorded(soul_version=True), "the recorded soul_version is True"),
        (recorded(soul_version="3"), "the recorded soul_version is '3'"),
        (recorded(soul_digest=3), "the recorded soul_digest is 3"),
        (recorded(clock="noon"), "the recorded clock is 'noon'"),
        (recorded(autonomous=1), "the recorded autonomous is 1"),
        (recorded(crusader="no"), "the recorded crusader is 'no'"),
        (recorded(tool_tier="T9"), "the recorded tool_tier is 'T9'"),
        (recorded(chosen_tier="T4"), "the recorded chosen_tier is 'T4'"),
        (recorded(effects="creates"), "the recorded effects is 'creates'"),
        (recorded(effects=["creates", 1]), "the recorded effects is ['creates', 1]"),
        (recorded(ask=["why"]), "the recorded ask is ['why']"),
        (recorded(flow="owner"), "the recorded flow is 'owner'"),
    ],
)
def test_a_damaged_record_is_refused_naming_the_field(data: object, message: str) -> None:
    with pytest.raises(InputsError) as refused:
        DecisionInputs.from_receipt(data)
    assert str(refused.value) == message


def test_a_recorded_clock_may_be_a_whole_number() -> None:
    assert DecisionInputs.from_receipt(recorded(clock=1700000000)).clock == 1700000000.0


def test_the_souls_digest_names_its_content() -> None:
    digest = soul_digest(SOUL)
    assert len(digest) == 16
    assert int(digest, 16) >= 0  # hexadecimal
    assert soul_digest(SOUL.model_copy()) == digest
    renamed = SOUL.model_copy(update={"name": "Galahad"})
    assert renamed.version == SOUL.version
    assert soul_digest(renamed) != digest


def earlier(command: str, recorded: dict[str, object]) -> StoredReceipt:
    """A policy_decision receipt as an earlier release wrote it, its JSON spelled out."""
    decided_from = {
        "action": {"capability": "shell.exec", "command": command, "method": None,
                   "in_workspace": None, "overwrites": None},
        "soul_version": 1, "soul_digest": soul_digest(SOUL), "clock": 1700000000.0,
        "autonomous": False, "crusader": False, "tool_tier": None, "effects": None,
        "ask": None, "flow": ["owner"],
    }  # fmt: skip
    outputs = {"kinds": ["shell.exec"], "reason": "", "auto_approved": False, **recorded}
    return StoredReceipt(
        1, "r1", "2026-01-01T00:00:00.000000Z", "policy_decision", str(recorded["verdict"]),
        json.dumps({"command": command, "decided_from": decided_from}), json.dumps(outputs),
        "success", None, None, None, None, None, None, "{}", "0", "1",
    )  # fmt: skip


def test_decisions_an_earlier_release_recorded_replay_the_same() -> None:
    root = "Deletes the whole filesystem or home directory."
    ledger = [
        earlier("ls", {"verdict": "allow", "tier": "T0", "rules": ["shell-read-only"]}),
        earlier("rm x", {"verdict": "needs_approval", "tier": "T3", "rules": ["shell-delete"],
                         "kinds": ["shell.destructive", "shell.exec"],
                         "reason": "T3 action needs your approval"}),
        earlier("mkdir x", {"verdict": "needs_approval", "tier": "T3", "reason": "asked",
                            "rules": ["shell-workspace-write"]}),
        earlier("rm -rf /", {"verdict": "deny", "tier": "T3", "rules": ["deny-rm-root"],
                             "kinds": [], "reason": root}),
    ]  # fmt: skip
    report = replay(ledger, one_soul(SOUL))
    assert report.not_replayable == ()
    assert [step.matches for step in report.steps] == [True, True, False, True]
    assert report.steps[2].differences == (
        "verdict: needs_approval, now allow",
        "tier: T3, now T1",
        "reason: asked, now ''",
    )
