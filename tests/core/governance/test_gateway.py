"""The gateway's outcome and decision receipt on plain values: what the model is told of a
governed call (never an id it could mistake for proof), what a receipt keeps instead of a
tool's output, which runs succeeded, and what a decision's receipt records."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from bot.app import Lancelot
from bot.sandbox import sandbox_limits
from core.events import CardKind
from core.governance.commands import shell_action
from core.governance.decision import INPUTS_KEY, Decision, DecisionInputs, Verdict
from core.governance.execution import Executor
from core.governance.gateway import ToolGateway, decision_receipt
from core.governance.outcomes import OutcomeKind, ToolOutcome
from core.governance.rollback import RollbackJournal
from core.receipts.base import ReceiptQuery
from core.receipts.model import ReceiptStatus
from core.receipts.registry import GovernanceReceipt
from core.tools.action import ToolAction
from core.tools.base import ToolResult
from core.tools.effects import ShellEffects
from core.tools.effects.provider import SandboxDryRuns
from core.tools.file_ops import file_action
from core.tools.sandbox import DockerEngine
from core.tools.workspace import Workspace
from soul import Action
from tests.fakes.channel import MemoryChannel
from tests.fakes.owner import say, tap
from tests.fakes.web_site import FakeSite

FETCH = ToolAction("web.fetch", None, {"url": "https://example.org/"})


def test_the_model_hears_what_happened_and_none_of_the_ids() -> None:
    outcome = ToolOutcome(
        OutcomeKind.RAN,
        "T1",
        "ls /workspace",
        output="café ✓",
        exit_code=0,
        receipt_id="r-2",
        rules=("no-network",),
        reason="fine",
        alternatives=("cat",),
        approval_id="a-1",
        text="exit 0",
        receipt_ids=("r-1", "r-2"),
        effects="created a.txt",
        change_id="c-1",
        recorded="[a page of 2 KB]",
    )
    told = outcome.for_model()
    assert json.loads(told) == {
        "kind": "ran",
        "tier": "T1",
        "command": "ls /workspace",
        "output": "café ✓",
        "exit_code": 0,
        "rules": ["no-network"],
        "reason": "fine",
        "alternatives": ["cat"],
        "effects": "created a.txt",
    }
    assert "café ✓" in told  # as written, not as \u escapes the model must decode


def test_what_is_empty_is_left_out_and_each_kind_has_its_word() -> None:
    words = {kind: json.loads(ToolOutcome(kind, "T3", "rm x").for_model()) for kind in OutcomeKind}
    assert {kind: told.pop("kind") for kind, told in words.items()} == {
        OutcomeKind.RAN: "ran",
        OutcomeKind.DENIED: "denied",
        OutcomeKind.WAITING: "waiting",
        OutcomeKind.NOT_APPROVED: "not_approved",
        OutcomeKind.EXPIRED: "expired",
        OutcomeKind.ALREADY_RAN: "already_ran",
        OutcomeKind.NOT_PERMITTED: "not_permitted",
        OutcomeKind.UNAVAILABLE: "unavailable",
        OutcomeKind.FAILED: "failed",
    }
    assert all(told == {"tier": "T3", "command": "rm x"} for told in words.values())


def test_a_receipt_keeps_the_tools_record_instead_of_its_output() -> None:
    page = ToolOutcome(OutcomeKind.RAN, "T0", "fetch", output="<html>…", recorded="[a page]")
    assert page.for_receipt()["output"] == "[a page]"
    plain = ToolOutcome(OutcomeKind.RAN, "T0", "ls", output="a.txt", exit_code=0)
    assert plain.for_receipt() == json.loads(plain.for_model())
    assert plain.for_receipt()["output"] == "a.txt"


def test_only_a_run_that_exited_zero_succeeded() -> None:
    assert ToolOutcome(OutcomeKind.RAN, "T0", "ls", exit_code=0).succeeded
    assert not ToolOutcome(OutcomeKind.RAN, "T0", "ls", exit_code=1).succeeded
    assert not ToolOutcome(OutcomeKind.RAN, "T0", "ls").succeeded
    assert not ToolOutcome(OutcomeKind.FAILED, "T0", "ls", exit_code=0).succeeded
    assert not ToolOutcome(OutcomeKind.DENIED, "T0", "ls", exit_code=0).succeeded


def test_a_decision_receipt_records_the_verdict_the_action_and_what_it_read() -> None:
    refused = Decision(Verdict.DENY, "T3", rules=("no-fetch",), reason="not here")
    receipt = decision_receipt(FETCH, refused)
    assert receipt.action_type == GovernanceReceipt.POLICY_DECISION
    assert receipt.action_name == "deny"
    assert receipt.status is ReceiptStatus.REFUSED
    assert receipt.inputs == {"command": FETCH.describe(), "action_hash": FETCH.digest}
    assert receipt.outputs == refused.snapshot()
    assert receipt.metadata == {"tier": "T3"}
    inputs = DecisionInputs(Action("web.fetch", None), 3, "0123456789abcdef", 1700000000.5)
    allowed = Decision(Verdict.ALLOW, "T0")
    kept = decision_receipt(FETCH, allowed, GovernanceReceipt.CRUSADER_AUTO_APPROVAL, inputs)
    assert kept.action_type == GovernanceReceipt.CRUSADER_AUTO_APPROVAL
    assert kept.status is ReceiptStatus.SUCCESS
    assert kept.inputs[INPUTS_KEY] == inputs.for_receipt()
    assert decision_receipt(FETCH, Decision(Verdict.NEEDS_APPROVAL, "T2")).status is (
        ReceiptStatus.SUCCESS
    )


async def test_a_call_is_the_owners_own_unless_it_says_it_is_scheduled(app: Lancelot) -> None:
    assert app.governance is not None
    commit = ToolAction("repo.commit", None, {})  # T2: the owner's own runs, a job's asks
    outcome = await app.governance.gateway.run(
        commit, via="memory", parent_id="p-1", quest_id=None, wait=False
    )
    assert outcome.kind is not OutcomeKind.WAITING
    scheduled = await app.governance.gateway.run(
        commit, via="memory", parent_id="p-2", quest_id=None, wait=False, autonomous=True
    )
    assert scheduled.kind is OutcomeKind.WAITING
    await app.ledger.flush()
    page = await app.ledger.page(ReceiptQuery(action_type=GovernanceReceipt.POLICY_DECISION))
    read = {r.parent_id: r.decoded("inputs")[INPUTS_KEY]["autonomous"] for r in page.receipts}
    assert read == {"p-1": False, "p-2": True}


async def sandbox_answers() -> str | None:
    """The sandbox's word at the moment a command comes: it answers (nothing is wrong)."""
    return None


async def sandbox_down() -> str | None:
    """The sandbox's word at the moment a command comes: its engine is gone."""
    return "the sandbox engine is not reachable"


async def test_a_sandbox_gone_at_the_dry_run_asks_the_owner_instead(
    app: Lancelot,
    phone: MemoryChannel,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The sandbox answered when asked; by the dry run, no engine answers any more. (And one
    # that said it was down is not even tried.)
    kit = app.governance
    assert kit is not None
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    workspace = Workspace(app.home / "workspace")
    effects = ShellEffects(
        DockerEngine(), workspace, app.home, kit.capabilities, sandbox_limits(app.settings)
    )
    async with effects:
        executor = Executor(kit.policy, kit.tools, app.ledger)
        mkdir = shell_action("mkdir build", workspace)
        outcomes = []
        for said in (sandbox_down, sandbox_answers):
            dry_runs = SandboxDryRuns(effects, said)
            gateway = ToolGateway(kit.policy, kit.approvals, executor, app.ledger, dry_runs)
            outcome = await gateway.run(
                mkdir, via="memory", parent_id="p", quest_id=None, wait=False
            )
            outcomes.append(outcome.kind)
            tried = "dry run impossible" in caplog.text
            assert tried is (said is sandbox_answers)  # a sandbox said down is not tried
    assert outcomes == [OutcomeKind.WAITING, OutcomeKind.WAITING]
    _, card = await phone.next_card()
    assert card.kind is CardKind.APPROVAL
    assert not (workspace.root / "build").exists()
    told = [r.getMessage() for r in caplog.records if r.name == "core.governance.gateway"]
    assert told == [
        "dry run impossible, asking the owner instead: the sandbox engine is not reachable: "
        "no Docker engine answers at unix:///nonexistent/docker.sock"
    ]


async def test_a_callers_own_limit_refuses_after_the_decision_and_nothing_runs(
    app: Lancelot,
) -> None:
    kit = app.governance
    assert kit is not None
    workspace = Workspace(app.home / "workspace")
    write = file_action(workspace, "file.write", {"path": "a.txt", "content": "hello"})
    seen: list[str] = []

    def above_its_risk(decision: Decision) -> ToolOutcome:
        seen.append(decision.tier)
        why = f"a {decision.tier} action is above the T0 risk the skill declares"
        return ToolOutcome(
            OutcomeKind.NOT_PERMITTED, decision.tier, "w", reason=why, receipt_ids=("r-own",)
        )

    refused = await kit.gateway.run(
        write, via="memory", parent_id="p", quest_id=None, limit=above_its_risk
    )
    assert refused.kind is OutcomeKind.NOT_PERMITTED
    assert refused.reason == f"a {seen[0]} action is above the T0 risk the skill declares"
    assert not (workspace.root / "a.txt").exists()
    decided, own = refused.receipt_ids  # the decision's receipt, then the caller's own
    assert own == "r-own"
    await app.ledger.flush()
    page = await app.ledger.page(ReceiptQuery(action_type=GovernanceReceipt.POLICY_DECISION))
    assert [r.id for r in page.receipts] == [decided]
    ran = await kit.gateway.run(write, via="memory", parent_id="p", quest_id=None, limit=None)
    assert ran.succeeded
    assert (workspace.root / "a.txt").read_text() == "hello"
    assert ran.for_receipt() == json.loads(ran.for_model())  # no record stands in for it
    assert decided not in ran.receipt_ids


async def test_a_waited_call_hears_what_the_owner_decided(
    app: Lancelot, phone: MemoryChannel
) -> None:
    kit = app.governance
    assert kit is not None
    workspace = Workspace(app.home / "workspace")
    outcomes: dict[str, ToolOutcome] = {}
    for name, press in (("kept.txt", "Deny"), ("gone.txt", "Approve")):
        (workspace.root / name).write_text("x")
        delete = file_action(workspace, "file.delete", {"path": name})
        asking = asyncio.create_task(
            kit.gateway.run(delete, via="memory", parent_id="p", quest_id=None)
        )
        _, card = await phone.next_card()
        assert not asking.done()  # it waits for the owner
        await tap(app, phone, card, press)
        outcomes[press] = await asyncio.wait_for(asking, 5.0)
    denied, approved = outcomes["Deny"], outcomes["Approve"]
    assert (denied.kind, denied.reason) == (OutcomeKind.NOT_APPROVED, "the owner denied it")
    assert (workspace.root / "kept.txt").exists()
    assert approved.kind is OutcomeKind.RAN
    assert approved.succeeded
    assert not (workspace.root / "gone.txt").exists()
    assert denied.approval_id is not None
    assert approved.approval_id not in (None, denied.approval_id)


async def test_a_scheduled_call_crusader_lets_through_leaves_its_own_receipt(
    app: Lancelot, phone: MemoryChannel
) -> None:
    kit = app.governance
    assert kit is not None
    commit = ToolAction("repo.commit", None, {})  # T2, scheduled: Crusader waives the card
    await say(app, phone, "Crusader")
    outcome = await kit.gateway.run(
        commit, via="memory", parent_id="p-1", quest_id=None, wait=False, autonomous=True
    )
    assert outcome.kind is not OutcomeKind.WAITING
    await app.ledger.flush()
    kind = GovernanceReceipt.CRUSADER_AUTO_APPROVAL
    [waived] = (await app.ledger.page(ReceiptQuery(action_type=kind))).receipts
    assert waived.parent_id == "p-1"
    assert waived.decoded("inputs")["command"] == commit.describe()


async def test_finishing_a_quest_says_when_its_t1_steps_were_undone(
    app: Lancelot, tmp_path: Path
) -> None:
    kit = app.governance
    assert kit is not None
    workspace = Workspace(app.home / "workspace")

    async def the_owners_check(action: ToolAction, result: ToolResult) -> str | None:
        return "the owner's check said no"

    (tmp_path / "snaps").mkdir()
    journal = RollbackJournal(workspace, app.ledger, the_owners_check, tmp_path / "snaps")
    executor = Executor(kit.policy, kit.tools, app.ledger, journal)
    gateway = ToolGateway(kit.policy, kit.approvals, executor, app.ledger)
    write = file_action(workspace, "file.write", {"path": "a.txt", "content": "hello"})
    ran = await gateway.run(write, via="memory", parent_id="p", quest_id="q")
    assert (ran.kind, ran.tier) == (OutcomeKind.RAN, "T1")
    assert await gateway.finish("q") == f"{write.describe()}: the owner's check said no"
    assert not (workspace.root / "a.txt").exists()
    assert await gateway.finish("q") is None


async def test_a_step_asked_again_after_a_restart_hears_its_first_answer_and_asks_nothing(
    app: Lancelot, phone: MemoryChannel
) -> None:
    kit = app.governance
    assert kit is not None
    workspace = Workspace(app.home / "workspace")
    (workspace.root / "gone.txt").write_text("x")
    delete = file_action(workspace, "file.delete", {"path": "gone.txt"})

    async def step() -> ToolOutcome:
        return await kit.gateway.run(delete, via="memory", parent_id="p", quest_id=None, key="k")

    asking = asyncio.create_task(step())
    _, card = await phone.next_card()
    await tap(app, phone, card, "Approve")
    first = await asyncio.wait_for(asking, 5.0)
    assert first.succeeded
    again = await asyncio.wait_for(step(), 5.0)  # the update handled again
    assert again.kind is OutcomeKind.ALREADY_RAN
    assert again.reason == "approval executed before Lancelot restarted; not run again"
    assert again.approval_id == first.approval_id
    await app.ledger.flush()
    page = await app.ledger.page(ReceiptQuery(action_type=GovernanceReceipt.POLICY_DECISION))
    assert len(page.receipts) == 1  # decided once, asked once
    assert len(phone.delivered) == 1


async def test_a_waited_call_whose_approval_lapsed_hears_that_nothing_ran(
    app: Lancelot, phone: MemoryChannel
) -> None:
    kit = app.governance
    assert kit is not None
    workspace = Workspace(app.home / "workspace")
    (workspace.root / "kept.txt").write_text("x")
    delete = file_action(workspace, "file.delete", {"path": "kept.txt"})
    asking = asyncio.create_task(
        kit.gateway.run(delete, via="memory", parent_id="p", quest_id=None)
    )
    await phone.next_card()
    await app.state.execute("UPDATE approvals SET expires_at = 0")
    other = file_action(workspace, "file.delete", {"path": "other.txt"})
    await kit.gateway.run(other, via="memory", parent_id="p", quest_id=None, wait=False)
    lapsed = await asyncio.wait_for(asking, 5.0)  # the new request woke the expiry loop
    assert (lapsed.kind, lapsed.reason) == (OutcomeKind.EXPIRED, "approval expired; nothing ran")
    assert (workspace.root / "kept.txt").exists()


@pytest.mark.app(
    env={
        "LANCELOT_LOOKUPS_FETCH_ALLOWLIST": "*",
        "LANCELOT_LOOKUPS_FETCH_PRIVATE_HOSTS": "127.0.0.1",
    }
)
async def test_a_fetched_page_reaches_the_model_and_its_receipts_keep_only_its_address(
    app: Lancelot,
) -> None:
    kit = app.governance
    assert kit is not None
    async with FakeSite() as site:
        url = f"{site.url}/article"
        fetch = ToolAction("web.fetch", None, {"url": url})
        outcome = await kit.gateway.run(fetch, via="memory", parent_id="p", quest_id=None)
    assert outcome.succeeded
    assert "after the last" in outcome.output  # the model reads the page itself
    kept = outcome.for_receipt()
    assert kept["output"] == outcome.recorded
    assert outcome.recorded.startswith(f"GET {url}: HTTP 200, text/html")
    assert "frost" not in json.dumps(kept)
    await app.ledger.flush()
    page = await app.ledger.page(ReceiptQuery(action_type="tool_run"))
    (run,) = page.receipts
    assert run.decoded("outputs")["output"] == outcome.recorded


@dataclass
class Wordless:
    """A tool refused without a word: a bare PermissionError, whose text is empty (the
    project's own errors always carry one)."""

    name: str = "wordless"

    async def run(self, action: ToolAction, capability: str | None) -> ToolResult:
        raise PermissionError


async def test_a_tool_refused_without_a_word_is_still_told_as_not_run(app: Lancelot) -> None:
    kit = app.governance
    assert kit is not None
    executor = Executor(kit.policy, Wordless(), app.ledger)
    gateway = ToolGateway(kit.policy, kit.approvals, executor, app.ledger)
    read = file_action(Workspace(app.home / "workspace"), "file.read", {"path": "a.txt"})
    outcome = await gateway.run(read, via="memory", parent_id="p", quest_id=None)
    assert (outcome.kind, outcome.reason) == (OutcomeKind.FAILED, "the tool did not run")
    assert json.loads(outcome.for_model())["reason"] == "the tool did not run"


async def test_a_command_holding_a_broken_character_is_refused_with_a_receipt(
    app: Lancelot,
) -> None:
    """A model's JSON can carry a lone surrogate, which no byte string (and no file name)
    holds: the command is refused before anything runs, and the refusal is kept."""
    kit = app.governance
    assert kit is not None
    workspace = Workspace(app.home / "workspace")
    (workspace.root / "café").write_text("x")
    rm = shell_action("rm caf\udce9", workspace)

    refused = await kit.gateway.run(rm, via="memory", parent_id="p", quest_id=None)

    assert refused.kind is OutcomeKind.DENIED
    assert refused.rules == ("unparseable-command",)
    assert refused.reason == (
        "cannot read the command: it holds a broken character (a lone surrogate)"
    )
    assert (workspace.root / "café").exists()
    await app.ledger.flush()
    page = await app.ledger.page(ReceiptQuery(action_type=GovernanceReceipt.POLICY_DECISION))
    assert [r.status for r in page.receipts] == [ReceiptStatus.REFUSED]
