"""T1 snapshots, verification and rollback, through the real Executor and SafeREPL."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from bot.app import Lancelot
from core.governance.execution import Executor
from core.governance.policy import PolicyEngine
from core.governance.rollback import RollbackJournal, default_verifier, touched_paths
from core.receipts.base import ReceiptQuery
from core.receipts.ledger import SqliteLedger
from core.tools.action import ToolAction
from core.tools.base import ToolResult
from core.tools.capability import CapabilityTokens
from core.tools.safe_repl import SafeRepl
from core.tools.workspace import Workspace
from soul import SHIPPED_VERSIONS_DIR, SoulStore
from tests.fakes.channel import MemoryChannel
from tests.fakes.owner import say

SHELL = "shell.exec"


def _executor(
    workspace: Workspace, ledger: SqliteLedger, journal: RollbackJournal
) -> tuple[Executor, PolicyEngine]:
    soul = SoulStore(SHIPPED_VERSIONS_DIR, workspace.root.parent / "soul").load_active()
    capabilities = CapabilityTokens(b"k" * 32)
    policy = PolicyEngine(lambda: soul, capabilities)
    return Executor(policy, SafeRepl(workspace, capabilities), ledger, journal), policy


async def _run(executor: Executor, policy: PolicyEngine, command: str, quest: str) -> str:
    action = ToolAction(SHELL, command, {"in_workspace": True, "overwrites": False})
    decision = policy.decide(action)
    report = await executor.execute(
        action, decision.tier, capability=decision.capability, quest_id=quest
    )
    return report.text


async def kinds(ledger: SqliteLedger, action_type: str) -> list[str]:
    await ledger.flush()
    page = await ledger.page(ReceiptQuery(action_type=action_type))
    return [r.status for r in page.receipts]


async def test_failed_t1_step_undoes_the_quests_t1_steps_and_stops_the_risky_one(
    workspace: Workspace, ledger: SqliteLedger, tmp_path: Path
) -> None:
    (workspace.root / "keep.txt").write_text("original")
    journal = await RollbackJournal.create(workspace, ledger, tmp_path)
    executor, policy = _executor(workspace, ledger, journal)
    assert (await _run(executor, policy, "mkdir made", "q1")).startswith("exit 0")
    assert (await _run(executor, policy, "cp keep.txt made/copy.txt", "q1")).startswith("exit 0")
    assert (workspace.root / "made" / "copy.txt").exists()
    failed = await _run(executor, policy, "cp no-such-file made/other.txt", "q1")
    assert not failed.startswith("exit 0")
    # A T3 step of the same quest drains the verifications first: one failed, so the T1
    # steps are undone, newest first, and the T3 step does not run.
    refused = await _run(executor, policy, "rm keep.txt", "q1")
    assert refused.startswith("Not run: an earlier step failed its check")
    assert not (workspace.root / "made").exists()
    assert (workspace.root / "keep.txt").read_text() == "original"
    assert await kinds(ledger, "verification_failed") == ["failure"]
    assert await kinds(ledger, "rollback") == ["success"] * 3
    assert not list((tmp_path / "snapshots").iterdir())  # copies dropped after the barrier


async def test_verified_steps_are_kept_and_other_quests_are_untouched(
    workspace: Workspace, ledger: SqliteLedger, tmp_path: Path
) -> None:
    journal = await RollbackJournal.create(workspace, ledger, tmp_path)
    executor, policy = _executor(workspace, ledger, journal)
    await _run(executor, policy, "mkdir good", "q1")
    await _run(executor, policy, "mkdir other", "q2")
    await _run(executor, policy, "cp missing x", "q2")
    assert await executor.finish("q1") is None
    assert "cp missing x" in (await executor.finish("q2") or "")
    assert (workspace.root / "good").is_dir()
    assert not (workspace.root / "other").exists()


async def test_overwritten_file_comes_back_byte_for_byte(
    workspace: Workspace, ledger: SqliteLedger, tmp_path: Path
) -> None:
    target = workspace.root / "notes.txt"
    target.write_bytes(b"before\x00\xff")
    (workspace.root / "new.txt").write_text("after")

    async def always_fails(action: ToolAction, result: ToolResult) -> str | None:
        return "the owner's check said no"

    journal = RollbackJournal(workspace, ledger, always_fails, tmp_path / "snaps")
    (tmp_path / "snaps").mkdir()
    executor, policy = _executor(workspace, ledger, journal)
    await _run(executor, policy, "cp new.txt notes.txt", "q")
    assert target.read_text() == "after"
    assert await executor.finish("q") == "cp new.txt notes.txt: the owner's check said no"
    assert target.read_bytes() == b"before\x00\xff"


def test_touched_paths_stay_inside_the_workspace(workspace: Workspace) -> None:
    action = ToolAction(SHELL, "cp -r a ../../etc/passwd b", {"path": "c", "dst": "/etc"})
    names = [workspace.display(p) for p in touched_paths(action, workspace)]
    assert names == ["/workspace/a", "/workspace/b", "/workspace/c"]


async def test_a_failed_command_from_chat_keeps_none_of_its_changes(app: Lancelot) -> None:
    phone = MemoryChannel()
    await app.attach(phone)
    ok = await say(app, phone, "/run mkdir fine")
    assert "not applied" not in ok.body
    assert (app.home / "workspace" / "fine").is_dir()
    failed = await say(app, phone, "/run mkdir half && cp nothing here")
    assert "exit 1" in failed.body
    assert "none of its changes were applied" in failed.body
    assert "creates 1 folder: half/" in failed.body
    assert not (app.home / "workspace" / "half").exists()


async def test_files_named_like_escapes_pass_their_check_as_spelled(app: Lancelot) -> None:
    # The check reads each file the step reported by its own name: not "report v2.txt" for
    # report%20v2.txt, nor "file.txt" for its ligature spelling (read so, the step failed
    # its check, and its rollback deleted notes.txt while the others stayed).
    phone = MemoryChannel()
    await app.attach(phone)
    ligature = "\ufb01le.txt"
    card = await say(app, phone, f"/run touch notes.txt 'report%20v2.txt' {ligature}")
    assert "failed its check" not in card.body
    assert card.body.endswith(f"creates 3 files: notes.txt, report%20v2.txt, {ligature}.")
    made = sorted(p.name for p in (app.home / "workspace").iterdir())
    assert made == ["notes.txt", "report%20v2.txt", ligature]


@pytest.mark.parametrize(
    "name", ["/etc/hostname", "../outside.txt", "/workspace/../outside.txt", "out/secret.txt"]
)
async def test_a_step_reporting_a_file_outside_the_workspace_fails_its_check(
    workspace: Workspace, name: str
) -> None:
    """Names a step reports are read as spelled, but never outside the workspace: not an
    absolute path elsewhere, not `..`, not through a link leading out."""
    outside = workspace.root.parent / "outside.txt"
    outside.write_text("x")
    (workspace.root.parent / "secret.txt").write_text("x")
    (workspace.root / "out").symlink_to(workspace.root.parent)
    check = default_verifier(workspace)
    wrote = hashlib.sha256(b"x").hexdigest()
    result = ToolResult(output="", exit_code=0, file_changes={name: wrote})
    action = ToolAction(SHELL, "touch x")
    assert await check(action, result) == f"{name} is not a file in the workspace"
    inside = ToolResult(output="", exit_code=0, file_changes={"/workspace/in.txt": wrote})
    (workspace.root / "in.txt").write_text("x")
    assert await check(action, inside) is None
