"""The skill executor: permissions, governance, receipts, and failures that stay contained."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from bot.app import Lancelot
from core.events import CardKind
from core.skills.api import ActionStatus
from core.skills.registry import Ownership
from core.skills.runner import RunStatus
from tests.core.skills.builder import (
    ECHO,
    EXPLODES_ON_IMPORT,
    receipts,
    registry_of,
    runner_of,
    write_skill,
)
from tests.fakes.channel import MemoryChannel
from tests.fakes.owner import say, tap

SHELL = ["read_input", "write_output", "run_commands"]

RUN_INPUT_COMMAND = """
from core.skills.api import SkillContext, ToolAction

async def run(ctx: SkillContext) -> None:
    command = ctx.read_input("text")
    outcome = await ctx.run(ToolAction("shell.exec", command, {"in_workspace": True}))
    ctx.write_output("text", f"{outcome.status}|{outcome.rule}|{outcome.text}")
"""


async def install(app: Lancelot, tmp_path: Path, name: str, code: str, **manifest: object) -> None:
    folder = write_skill(tmp_path / "src", name, code, **manifest)
    await registry_of(app).install(folder, Ownership.USER, enabled=True)


async def test_echo_runs_with_a_receipt_linked_to_its_quest(app: Lancelot, tmp_path: Path) -> None:
    await install(app, tmp_path, "echo", ECHO)
    run = await runner_of(app).run("echo", {"text": "hi"}, via="memory", parent_id="cmd-1")
    assert (run.status, run.outputs) == (RunStatus.SUCCESS, {"text": "hi"})
    [receipt] = await receipts(app, "skill_run")
    assert receipt.id == run.receipt_id
    assert (receipt.action_name, receipt.status) == ("echo", "success")
    assert (receipt.parent_id, receipt.quest_id) == ("cmd-1", "cmd-1")
    assert '"text":"hi"' in receipt.inputs
    assert '"text":"hi"' in receipt.outputs
    assert receipt.duration_ms is not None


async def test_missing_permission_for_context_fails_the_run(app: Lancelot, tmp_path: Path) -> None:
    await install(app, tmp_path, "mute", ECHO, permissions=["read_input"])
    run = await runner_of(app).run("mute", {"text": "hi"}, via="memory")
    assert run.status is RunStatus.FAILURE
    assert "lacks the write_output permission" in run.message


async def test_exception_is_contained(app: Lancelot, phone: MemoryChannel, tmp_path: Path) -> None:
    code = "async def run(ctx):\n    raise RuntimeError('boom')\n"
    await install(app, tmp_path, "crasher", code)
    run = await runner_of(app).run("crasher", {}, via="memory")
    assert run.status is RunStatus.FAILURE
    assert "RuntimeError: boom" in run.message
    [receipt] = await receipts(app, "skill_run")
    assert receipt.status == "failure"
    assert "boom" in (receipt.error_message or "")
    assert (await say(app, phone, "/status")).title  # Lancelot still answers


async def test_exit_at_run_and_at_import_are_contained(app: Lancelot, tmp_path: Path) -> None:
    await install(app, tmp_path, "quitter", "import sys\ndef run(ctx):\n    sys.exit(3)\n")
    await install(app, tmp_path, "exploder", EXPLODES_ON_IMPORT)
    runner = runner_of(app)
    assert "SystemExit" in (await runner.run("quitter", {}, via="memory")).message
    loaded = await runner.run("exploder", {}, via="memory")
    assert loaded.status is RunStatus.FAILURE
    assert loaded.message.startswith("could not load")


@pytest.mark.parametrize(
    "code",
    [
        "import asyncio\nasync def run(ctx):\n    await asyncio.sleep(30)\n",
        "import time\ndef run(ctx):\n    time.sleep(1.5)\n",
    ],
    ids=["async", "thread"],
)
async def test_hanging_skill_times_out(app: Lancelot, tmp_path: Path, code: str) -> None:
    await install(app, tmp_path, "sleeper", code, timeout_seconds=0.2)
    started = time.monotonic()
    run = await runner_of(app).run("sleeper", {}, via="memory")
    assert time.monotonic() - started < 1.2
    assert run.status is RunStatus.FAILURE
    assert run.message == "timed out after 0.2 s"


async def test_refusals_before_any_code_runs(app: Lancelot, tmp_path: Path) -> None:
    runner = runner_of(app)
    assert "no skill named" in (await runner.run("ghost", {}, via="memory")).message
    await install(app, tmp_path, "echo", ECHO)
    bad_input = await runner.run("echo", {"text": 5}, via="memory")
    assert (bad_input.status, bad_input.message) == (
        RunStatus.REFUSED,
        "'text' must be string, not int",
    )
    scheduled = await runner.run("echo", {"text": "x"}, via="scheduler", scheduled=True)
    assert "may not run on a schedule" in scheduled.message
    await registry_of(app).set_enabled("echo", False)
    assert "is disabled" in (await runner.run("echo", {}, via="memory")).message


async def test_code_changed_after_install_is_refused_and_not_imported(
    app: Lancelot, tmp_path: Path
) -> None:
    await install(app, tmp_path, "echo", ECHO)
    installed = app.home / "skills" / "echo"
    (installed / "skill.py").write_text(EXPLODES_ON_IMPORT)
    run = await runner_of(app).run("echo", {"text": "x"}, via="memory")
    assert run.status is RunStatus.REFUSED
    assert "changed on disk" in run.message
    assert not (installed / "IMPORTED").exists()


async def test_broken_manifest_after_install_never_imports(app: Lancelot, tmp_path: Path) -> None:
    await install(app, tmp_path, "exploder", EXPLODES_ON_IMPORT)
    installed = app.home / "skills" / "exploder"
    (installed / "skill.yaml").write_text("name: exploder\nentry_point: [nope\n")
    run = await runner_of(app).run("exploder", {}, via="memory")
    assert run.status is RunStatus.REFUSED
    assert "not valid YAML" in run.message
    assert not (installed / "IMPORTED").exists()


async def test_denied_action_comes_back_with_rule_and_alternatives(
    app: Lancelot, tmp_path: Path
) -> None:
    await install(app, tmp_path, "shell", RUN_INPUT_COMMAND, permissions=SHELL, risk="T3")
    run = await runner_of(app).run("shell", {"text": "rm -rf /"}, via="memory")
    status, rule, text = run.outputs["text"].split("|", 2)
    assert (status, rule) == (ActionStatus.DENIED, "deny-rm-root")
    assert "Not allowed (rule deny-rm-root)" in text
    assert [r.action_name for r in await receipts(app, "policy_decision")] == ["deny"]


async def test_action_above_the_declared_risk_is_refused(app: Lancelot, tmp_path: Path) -> None:
    await install(app, tmp_path, "shell", RUN_INPUT_COMMAND, permissions=SHELL, risk="T0")
    (app.home / "workspace" / "keep").mkdir()
    run = await runner_of(app).run("shell", {"text": "rm -rf /workspace/keep"}, via="memory")
    assert run.outputs["text"].startswith(f"{ActionStatus.NOT_PERMITTED}|")
    assert "above the T0 risk" in run.outputs["text"]
    assert (app.home / "workspace" / "keep").exists()


async def test_t3_action_waits_for_approval_then_runs_once(
    app: Lancelot, phone: MemoryChannel, tmp_path: Path
) -> None:
    await install(app, tmp_path, "shell", RUN_INPUT_COMMAND, permissions=SHELL, risk="T3")
    (app.home / "workspace" / "old").mkdir()
    run = await runner_of(app).run("shell", {"text": "rm -rf /workspace/old"}, via="memory")
    assert run.status is RunStatus.WAITING
    assert run.outputs["text"].startswith(f"{ActionStatus.WAITING_APPROVAL}|")
    [(_, card)] = phone.delivered
    assert card.kind is CardKind.APPROVAL
    assert "rm -rf /workspace/old" in card.body
    assert (app.home / "workspace" / "old").exists()
    await tap(app, phone, card, "Approve")
    assert not (app.home / "workspace" / "old").exists()
    [skill_run] = await receipts(app, "skill_run")
    assert skill_run.status == "pending"


async def test_capability_without_a_provider_is_unavailable(app: Lancelot, tmp_path: Path) -> None:
    code = """
from core.skills.api import SkillContext, ToolAction

async def run(ctx: SkillContext) -> None:
    outcome = await ctx.run(ToolAction("file.read", None, {"path": "a.txt"}))
    ctx.write_output("text", f"{outcome.status}|{outcome.text}")
"""
    await install(app, tmp_path, "reader", code, permissions=["write_output", "read_files"])
    only_shell = frozenset({"shell.exec"})
    run = await runner_of(app, provided=only_shell).run("reader", {}, via="memory")
    assert run.outputs["text"] == (
        f"{ActionStatus.UNAVAILABLE}|No tool provider handles file.read yet, so it did not run."
    )
