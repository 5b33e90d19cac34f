"""Replay: every decision that real flows leave in the ledger is decided again, from the
inputs its receipt recorded, to the same result; an older receipt is "not replayable"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.app import Lancelot
from bot.governance import load_soul, soul_store
from bot.ledger import LEDGER_FILE
from core.config import Settings, load_settings
from core.events import CardKind
from core.governance.decision import INPUTS_KEY
from core.governance.gateway import decision_receipt
from core.governance.policy import PolicyEngine
from core.governance.replay import (
    NotReplayable,
    ReplayReport,
    one_soul,
    read_decision,
    recorded_souls,
    replay,
)
from core.receipts.history import stored_of_kind
from core.receipts.model import StoredReceipt
from core.tools.action import ToolAction
from core.tools.capability import CapabilityTokens
from soul import Soul
from tests.bot.test_agent_end_to_end import CLEANUP, lancelot
from tests.core.governance.test_whatif import SHIPPED, with_risk
from tests.core.governance.test_whatif import stored as read_back
from tests.fakes.channel import MemoryChannel
from tests.fakes.owner import say, tap
from tests.fakes.workspace import put

DECISION = "policy_decision"


@pytest.fixture
def settings(tmp_path: Path, docker_image: str) -> Settings:
    return load_settings(
        environ={"LANCELOT_HOME": str(tmp_path / "home"), "LANCELOT_SANDBOX_IMAGE": docker_image}
    )


async def replayed(app: Lancelot) -> ReplayReport:
    """Every decision in `app`'s ledger, decided again under the Soul that made it."""
    await app.ledger.flush()
    receipts = stored_of_kind(app.home / LEDGER_FILE, DECISION)
    return replay(receipts, recorded_souls(load_soul(app.home).store))


async def run_commands(app: Lancelot, phone: MemoryChannel) -> None:
    """/run on the Docker sandbox: a read, a write applied at once, a delete that asks
    (denied), a read of a secrets file that asks whatever its tier (denied), and a command
    the denylist refuses."""
    put(app.home / "workspace" / "old" / "keep.txt", "precious")
    assert "exit 0" in (await say(app, phone, "/run ls -la /workspace")).body
    made = await say(app, phone, "/run echo hi > a.txt", wait=30.0)
    assert "creates 1 file" in made.body
    card = await say(app, phone, "/run rm -rf /workspace/old", wait=30.0)
    assert card.kind is CardKind.APPROVAL
    await tap(app, phone, card, "Deny")
    secrets = await say(app, phone, "/run cat .env")
    assert secrets.kind is CardKind.APPROVAL
    await tap(app, phone, secrets, "Deny")
    refused = await say(app, phone, "/run rm -rf /")
    assert refused.title.startswith("Not allowed")


async def test_every_run_decision_is_decided_again_the_same(
    app: Lancelot, phone: MemoryChannel
) -> None:
    await run_commands(app, phone)
    report = await replayed(app)
    assert report.not_replayable == ()
    verdicts = [step.decision.recorded["verdict"] for step in report.steps]
    assert verdicts == ["allow", "allow", "needs_approval", "needs_approval", "deny"]
    assert report.steps[3].decision.inputs.ask is not None
    assert [step.decision.inputs.effects for step in report.steps][1:3] == [
        ("creates",),
        ("deletes",),
    ]
    assert report.ok, [step.explain() for step in report.steps if not step.matches]


async def test_a_decision_under_another_soul_is_named_by_its_step(
    app: Lancelot, phone: MemoryChannel
) -> None:
    await run_commands(app, phone)
    await app.ledger.flush()
    shipped = load_soul(app.home).current
    stricter = shipped.model_copy(
        update={"risk_rules": shipped.risk_rules.model_copy(update={"default_tier": "T3"})}
    )
    strict_effects = stricter.risk_rules.effects.model_copy(update={"creates": "T3"})
    stricter = stricter.model_copy(
        update={"risk_rules": stricter.risk_rules.model_copy(update={"effects": strict_effects})}
    )
    report = replay(stored_of_kind(app.home / LEDGER_FILE, DECISION), one_soul(stricter))
    mismatch = report.first_mismatch
    assert mismatch is not None
    assert mismatch.number == 2
    assert mismatch.explain() == (
        "step 2 (echo hi > a.txt): verdict: allow, now needs_approval; tier: T1, now T3; "
        "reason: '', now T3 action needs your approval"
    )


async def test_every_agent_decision_is_decided_again_the_same(tmp_path: Path) -> None:
    """The scripted model lists the workspace (a private read), then deletes a file: its
    dry run shows the delete, which asks (the owner approves)."""
    async with lancelot(tmp_path, "openai") as owner:
        (owner.workspace / "old.log").write_text("2019 lines\n")
        owner.fake.reply(*CLEANUP)
        await owner.say("plan the cleanup of old logs and then delete old.log")
        approval = await owner.next_card()
        await tap(owner.app, owner.phone, approval, "Approve")
        assert (await owner.next_card()).title == "Done"
        report = await replayed(owner.app)
    assert [s.decision.recorded["verdict"] for s in report.steps] == ["allow", "needs_approval"]
    assert report.steps[1].decision.inputs.effects == ("deletes",)
    assert report.steps[1].decision.inputs.flow == ("owner", "private")
    assert report.not_replayable == ()
    assert report.ok, [step.explain() for step in report.steps if not step.matches]


def stored(inputs: object, outputs: object = None) -> StoredReceipt:
    """A policy_decision receipt as the ledger returns it."""
    outputs = {"verdict": "allow", "tier": "T0"} if outputs is None else outputs
    return StoredReceipt(
        7, "r7", "2026-01-01T00:00:00.000000Z", DECISION, "allow", json.dumps(inputs),
        json.dumps(outputs), "success", None, None, None, None, None, None, "{}", "0", "1",
    )  # fmt: skip


@pytest.mark.parametrize(
    ("inputs", "reason"),
    [
        ({"command": "ls"}, "recorded before decisions kept their inputs"),
        ("not json at all", "recorded before decisions kept their inputs"),
        ({"command": "ls", INPUTS_KEY: {"action": {}}}, "the recorded action has no capability"),
        (
            {"command": "ls", INPUTS_KEY: {"action": {"capability": "shell.exec"}}},
            "the recorded inputs lack 'soul_version'",
        ),
    ],
)
def test_an_older_or_damaged_receipt_is_not_replayable(inputs: object, reason: str) -> None:
    found = read_decision(stored(inputs))
    assert found == NotReplayable("r7", 7, "ls" if isinstance(inputs, dict) else "", reason)
    report = replay([stored(inputs)], one_soul(load_soul(Path("/nonexistent")).current))
    assert report.steps == ()
    assert report.not_replayable == (found,)
    assert report.ok


def judged(
    soul: Soul, *commands: str, autonomous: bool = False, crusader: bool = False
) -> list[StoredReceipt]:
    """The receipts `soul`'s engine leaves for these /run commands."""
    engine = PolicyEngine(lambda: soul, CapabilityTokens(b"k" * 32), crusader=lambda: crusader)
    found = []
    for seq, command in enumerate(commands, start=1):
        action = ToolAction("shell.exec", command, {})
        decision, inputs = engine.judge(action, autonomous=autonomous)
        found.append(read_back(decision_receipt(action, decision, inputs=inputs), seq))
    return found


@pytest.mark.parametrize("outputs", [{"tier": "T0"}, "allow"])
def test_a_decision_whose_verdict_is_not_recorded_is_not_replayable(outputs: object) -> None:
    (listing,) = judged(SHIPPED, "ls")
    damaged = stored(listing.decoded("inputs"), outputs)
    report = replay([damaged, listing], one_soul(SHIPPED))
    assert report.not_replayable == (NotReplayable("r7", 7, "ls", "the verdict is not recorded"),)
    assert [step.number for step in report.steps] == [2]


def test_a_decision_that_recorded_no_command_is_named_by_its_receipt() -> None:
    (listing,) = judged(SHIPPED, "ls")
    inputs = {k: v for k, v in listing.decoded("inputs").items() if k != "command"}
    report = replay(
        [stored(inputs, {**listing.decoded("outputs"), "tier": "T1"})], one_soul(SHIPPED)
    )
    assert report.steps[0].explain() == "step 1 (r7): tier: T1, now T0"
    unreadable = {**inputs, INPUTS_KEY: {"action": {}}}
    assert read_decision(stored(unreadable)).command == ""


def test_the_same_verdict_by_other_rules_is_a_difference() -> None:
    renamed = tuple(
        rule.model_copy(update={"id": "shell-remove", "kind": "file.delete"})
        if rule.id == "shell-delete"
        else rule
        for rule in SHIPPED.risk_rules.rules
    )
    report = replay(judged(SHIPPED, "rm old.txt"), one_soul(with_risk(SHIPPED, rules=renamed)))
    assert report.steps[0].differences == (
        "rules: [shell-delete], now [shell-remove]",
        "kinds: [shell.destructive, shell.exec], now [file.delete, shell.exec]",
    )
    assert not report.ok


def test_work_crusader_mode_ran_is_asked_about_under_a_soul_without_it() -> None:
    ran = judged(SHIPPED, "make", autonomous=True, crusader=True)
    tiers = SHIPPED.crusader.model_copy(update={"auto_approve_tiers": ("T1",)})
    report = replay(ran, one_soul(SHIPPED.model_copy(update={"crusader": tiers})))
    assert report.steps[0].differences == (
        "verdict: allow, now needs_approval",
        "reason: auto-approved in Crusader mode, now T2 action needs your approval",
        "auto_approved: True, now False",
    )


def test_a_soul_gone_or_changed_on_disk_is_not_taken_for_the_one_that_decided(
    tmp_path: Path,
) -> None:
    changed = with_risk(SHIPPED, default_tier="T3")
    later = SHIPPED.model_copy(update={"version": 9})
    store = soul_store(tmp_path)
    receipts = [*judged(changed, "make"), *judged(later, "ls", "pwd"), *judged(SHIPPED, "ls")]
    report = replay(receipts, recorded_souls(store))
    assert [(gone.command, gone.reason) for gone in report.not_replayable] == [
        ("make", "soul v1 on disk is not the soul that decided (its content changed)"),
        ("ls", "soul version 9 does not exist"),
        ("pwd", "soul version 9 does not exist"),
    ]
    assert [step.number for step in report.steps] == [4]
    assert report.ok
