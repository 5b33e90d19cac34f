"""The executor on its own: what its receipts keep (bounded parameters and output, the
intent before a change, the policy naming the approval), what the owner reads when nothing
ran, and a stop that waits for a change but not for a read."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from core.errors import NoToolAvailable, PolicyDenied, ToolFailed, ToolUnavailable
from core.governance.execution import Executor, RunReport
from core.governance.policy import PolicyEngine
from core.governance.rollback import RollbackJournal
from core.receipts.base import ReceiptQuery
from core.receipts.ledger import SqliteLedger
from core.receipts.model import StoredReceipt
from core.runtime.stopping import Stopped, StopSwitch
from core.tools.action import ToolAction
from core.tools.base import ToolResult
from core.tools.capability import CapabilityTokens
from core.tools.workspace import Workspace
from soul import SHIPPED_VERSIONS_DIR, SoulStore

ECHO = ToolAction("shell.exec", "echo hi", {"in_workspace": True})
DENIED = ToolAction("shell.exec", "rm -rf /", {"in_workspace": True})


@dataclass
class Scripted:
    """A command runner that answers each run with the next result (or error) it was given,
    and keeps what it was asked to run with which capability."""

    answers: list[ToolResult | Exception]
    name: str = "scripted"
    ran: list[tuple[ToolAction, str | None]] = field(default_factory=list)
    gate: asyncio.Event | None = None  # when set, each run waits for it
    started: asyncio.Event = field(default_factory=asyncio.Event)

    async def run(self, action: ToolAction, capability: str | None) -> ToolResult:
        self.ran.append((action, capability))
        self.started.set()
        if self.gate is not None:
            await self.gate.wait()
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


@dataclass
class Rig:
    ledger: SqliteLedger
    policy: PolicyEngine

    def executor(self, *answers: ToolResult | Exception) -> tuple[Executor, Scripted]:
        runner = Scripted(list(answers))
        return Executor(self.policy, runner, self.ledger), runner

    async def receipts(self, kind: str) -> list[StoredReceipt]:
        await self.ledger.flush()
        page = await self.ledger.page(ReceiptQuery(action_type=kind, limit=100))
        return list(reversed(page.receipts))  # oldest first


@pytest.fixture
async def rig(tmp_path: Path) -> AsyncIterator[Rig]:
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        soul = SoulStore(SHIPPED_VERSIONS_DIR, tmp_path / "soul").load_active()
        yield Rig(ledger, PolicyEngine(lambda: soul, CapabilityTokens(b"k" * 32)))


async def the_run(rig: Rig) -> StoredReceipt:
    (receipt,) = await rig.receipts("tool_run")
    return receipt


async def test_parameters_are_kept_whole_up_to_500_characters(rig: Rig) -> None:
    executor, _ = rig.executor(ToolResult(0, "ok"))
    params = {"exact": "a" * 500, "long": "b" * 501, "number": 7}
    await executor.execute(ToolAction("file.write", None, params), "T1", capability="c")
    kept = (await the_run(rig)).decoded("inputs")["params"]
    assert kept == {"exact": "a" * 500, "long": "b" * 500 + "... [501 characters]", "number": 7}


async def test_output_is_kept_up_to_2000_characters_and_says_when_it_was_cut(rig: Rig) -> None:
    answers = (ToolResult(0, "x" * 2000), ToolResult(0, "y" * 2001), ToolResult(0, "z", True))
    executor, _ = rig.executor(*answers)
    for _ in answers:
        await executor.execute(ECHO, "T1", capability="c")
    kept = [r.decoded("outputs") for r in await rig.receipts("tool_run")]
    assert [(len(o["output"]), o["truncated"]) for o in kept] == [
        (2000, False),
        (2000, True),  # longer than a receipt keeps
        (1, True),  # the tool cut it itself
    ]


async def test_a_tools_own_record_replaces_its_output_in_the_receipt(rig: Rig) -> None:
    page = ToolResult(0, "the page's text", recorded="GET /page: 15 characters")
    executor, _ = rig.executor(page)
    report = await executor.execute(ECHO, "T1", capability="c")
    assert report.text == "exit 0\nthe page's text"  # the owner sees what it said
    assert (await the_run(rig)).decoded("outputs")["output"] == "GET /page: 15 characters"


async def test_what_the_owner_reads_and_the_receipt_keeps_of_a_run(rig: Rig) -> None:
    changed = ToolResult(
        3, "  \n", file_changes={"a.txt": None}, provider="docker", change_id="ch1"
    )
    executor, _ = rig.executor(changed, ToolResult(0, "done"))
    report = await executor.execute(ECHO, "T1", capability="c")
    assert (report.text, report.exit_code, report.error, report.refused) == (
        "exit 3\n(no output)",
        3,
        None,
        False,
    )
    unchanged = await executor.execute(ECHO, "T1", capability="c")
    first, second = await rig.receipts("tool_run")
    assert first.id == report.receipt_id
    assert first.status == "failure"  # a non-zero exit
    assert first.decoded("inputs") == {
        "command": "echo hi",
        "action_hash": ECHO.digest,
        "params": {"in_workspace": True},
    }
    assert first.decoded("outputs") == {
        "exit_code": 3,
        "output": "  \n",
        "truncated": False,
        "file_changes": {"a.txt": None},
        "change": "ch1",
        "provider": "docker",
        "fallback": None,
    }
    meta = first.decoded("metadata")
    assert (meta["tier"], meta["runner"], meta["provider"], meta["approval_id"]) == (
        "T1",
        "docker",
        "docker",
        None,
    )
    assert second.id == unchanged.receipt_id
    assert second.status == "success"
    assert "change" not in second.decoded("outputs")  # nothing Undo could take back
    # A result that does not name its provider is the runner's own.
    assert second.decoded("outputs")["provider"] == "scripted"
    assert second.decoded("metadata")["runner"] == "scripted"


async def test_nothing_ran_is_said_provider_by_provider_in_the_owners_words(rig: Rig) -> None:
    reasons = (
        ("docker", "engine down"),
        ("docker_dry_run", "no image"),
        ("host", "not allowed"),
        ("safe_repl", "cannot parse it"),
        ("odd", "gone"),
    )
    executor, _ = rig.executor(NoToolAvailable("shell.exec", reasons))
    report = await executor.execute(ECHO, "T1", capability="c")
    assert report.text == (
        "Not run: nothing here can run it right now.\n"
        "- the sandbox: engine down\n"
        "- the sandbox's dry run: no image\n"
        "- this machine: not allowed\n"
        "- the built-in shell: cannot parse it\n"
        "- odd: gone\n"
        "`lancelot doctor` on the machine Lancelot runs on says what to fix."
    )
    assert (report.result, report.exit_code, report.refused) == (None, None, False)
    receipt = await the_run(rig)
    assert receipt.status == "failure"
    assert receipt.decoded("outputs") is None
    assert receipt.error_message == report.error == str(NoToolAvailable("shell.exec", reasons))


@pytest.mark.parametrize(
    ("error", "said", "refused"),
    [
        (PolicyDenied("not this one"), "Refused by governance", True),
        (PermissionError("outside the workspace"), "Refused by governance", True),
        (ToolFailed("crashed"), "Failed", False),
        (ToolUnavailable("engine down"), "Failed", False),
    ],
    ids=["policy", "permission", "failed", "unavailable"],
)  # fmt: skip
async def test_a_refusal_or_failure_at_run_time_is_told_and_receipted(
    rig: Rig, error: Exception, said: str, refused: bool
) -> None:
    executor, _ = rig.executor(error)
    report = await executor.execute(ECHO, "T1", capability="c")
    assert (report.text, report.error, report.refused, report.result) == (
        f"{said}: {error}",
        str(error),
        refused,
        None,
    )
    assert (await the_run(rig)).error_message == str(error)


async def test_an_approved_action_is_checked_against_the_denylist_again(rig: Rig) -> None:
    executor, runner = rig.executor(ToolResult(0, "never"))
    report = await executor.execute(DENIED, "T3", approval_id="ap1")  # no capability given
    assert report.refused
    assert report.text.startswith("Refused by governance: ")
    assert runner.ran == []  # the runner was never asked
    ok, runner = rig.executor(ToolResult(0, "hi"))
    await ok.execute(ECHO, "T3", approval_id="ap2")
    [(action, capability)] = runner.ran
    assert action == ECHO
    assert capability  # a capability issued for exactly this approved action


async def test_a_change_is_announced_by_an_intent_a_read_is_not(rig: Rig) -> None:
    executor, _ = rig.executor(ToolResult(0, "a"), ToolResult(0, "b"), ToolResult(0, "c"))
    read = await executor.execute(ECHO, "T0", capability="c")
    change = await executor.execute(ECHO, "T1", capability="c", parent_id="p", quest_id="q")
    risky = await executor.execute(ECHO, "T2", capability="c")
    intents = await rig.receipts("tool_intent")
    assert [i.decoded("outputs")["outcome_id"] for i in intents] == [
        change.receipt_id,
        risky.receipt_id,
    ]
    assert read.receipt_id not in {i.decoded("outputs")["outcome_id"] for i in intents}
    first = intents[0]
    assert (first.parent_id, first.quest_id, first.status) == ("p", "q", "pending")
    assert first.decoded("inputs") == {
        "command": "echo hi",
        "action_hash": ECHO.digest,
        "params": {"in_workspace": True},
    }
    assert first.decoded("metadata")["tier"] == "T1"


async def test_the_policy_in_a_receipt_names_the_approval(rig: Rig) -> None:
    executor, _ = rig.executor(*(ToolResult(0, "x") for _ in range(3)))
    await executor.execute(ECHO, "T2", capability="c", approval_id="ap1")
    await executor.execute(ECHO, "T2", capability="c", approval_id="ap2", policy={"verdict": "v"})
    await executor.execute(
        ECHO, "T2", capability="c", approval_id="ap3", policy={"approval_id": "own"}
    )
    runs = [r.decoded("metadata") for r in await rig.receipts("tool_run")]
    assert [m["approval_id"] for m in runs] == ["ap1", "ap2", "ap3"]
    policies = [m["policy"] for m in runs]
    assert policies == [
        {"tier": "T2", "approval_id": "ap1"},
        {"verdict": "v", "approval_id": "ap2"},
        {"approval_id": "own"},  # the caller's own snapshot is not overwritten
    ]
    intents = [r.decoded("metadata") for r in await rig.receipts("tool_intent")]
    assert [m["approval_id"] for m in intents] == ["ap1", "ap2", "ap3"]
    assert intents[0]["policy"] == {"tier": "T2", "approval_id": "ap1"}


async def test_a_risky_runs_receipt_is_on_disk_when_it_returns(rig: Rig, tmp_path: Path) -> None:
    async with SqliteLedger(tmp_path / "slow.db", flush_interval=30.0) as slow:
        runner = Scripted([ToolResult(0, "plain")])
        executor = Executor(rig.policy, runner, slow)
        plain = await executor.execute(ECHO, "T1", capability="c")
        assert await slow.get(plain.receipt_id) is None  # queued, committed in a while
        for tier in ("T2", "T3"):
            runner.answers.append(ToolResult(0, "risky"))
            risky = await executor.execute(ECHO, tier, capability="c")
            assert await slow.get(risky.receipt_id) is not None  # committed before returning


@pytest.mark.parametrize(("tier", "finished"), [("T0", False), ("T1", True)])
async def test_a_stop_waits_for_a_change_but_not_for_a_read(
    rig: Rig, tier: str, finished: bool
) -> None:
    executor, runner = rig.executor(ToolResult(0, "done"))
    runner.gate = asyncio.Event()
    switch = StopSwitch()
    task = asyncio.create_task(switch.run(executor.execute(ECHO, tier, capability="c")))
    await asyncio.wait_for(runner.started.wait(), 5)
    switch.ask("owner", "memory")
    await asyncio.sleep(0.05)
    runner.gate.set()
    if finished:
        report: RunReport = await asyncio.wait_for(task, 5)
        assert report.text == "exit 0\ndone"
    else:
        with pytest.raises(Stopped):
            await asyncio.wait_for(task, 5)
        assert await rig.receipts("tool_run") == []


async def test_a_receipt_says_how_long_the_run_took(rig: Rig) -> None:
    executor, runner = rig.executor(ToolResult(0, "slow"))
    runner.gate = asyncio.Event()
    running = asyncio.create_task(executor.execute(ECHO, "T1", capability="c"))
    await asyncio.wait_for(runner.started.wait(), 5)
    await asyncio.sleep(0.2)
    runner.gate.set()
    await running
    assert 150 <= (await the_run(rig)).duration_ms < 10_000  # milliseconds, about 200


async def test_a_change_that_could_not_run_fails_its_check_and_stops_the_risky_step(
    rig: Rig, tmp_path: Path
) -> None:
    workspace = Workspace(tmp_path / "ws")
    journal = await RollbackJournal.create(workspace, rig.ledger, tmp_path / "home")
    runner = Scripted([ToolFailed("crashed"), ToolResult(0, "never")])
    executor = Executor(rig.policy, runner, rig.ledger, journal)
    await executor.execute(ECHO, "T1", capability="c", quest_id="q")
    risky = await executor.execute(DENIED, "T3", capability="c", quest_id="q")
    reason = "an earlier step failed its check and was undone (echo hi: exited with 1)"
    assert (risky.text, risky.error, risky.result) == (f"Not run: {reason}.", reason, None)
    assert not risky.refused  # nothing refused it: an earlier step was undone
    assert [action for action, _ in runner.ran] == [ECHO]  # the risky step never ran
    assert (await rig.ledger.get(risky.receipt_id)) is not None  # its receipt, on disk
    # Another quest, or the same one once its checks are drained, goes on.
    assert await executor.finish("q") is None
    assert (await executor.execute(ECHO, "T3", capability="c", quest_id="q")).text == (
        "exit 0\nnever"
    )
