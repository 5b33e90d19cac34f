"""What a dry run becomes (no engine needed): which commands are judged by effect, the apply
action an approval binds to, the dry run's receipt, and the owner's words for it."""

from __future__ import annotations

import pytest

from core.governance.by_effect import (
    MAX_OUTPUT,
    apply_action,
    dry_run_receipt,
    failed_text,
    judged_by_effect,
    unchanged_text,
)
from core.receipts.model import ReceiptStatus
from core.tools.action import ToolAction
from core.tools.base import ToolResult
from core.tools.effects import Effect, EffectSet, FileState
from core.tools.effects.model import ABSENT
from core.tools.effects.records import DryRun

MADE = EffectSet((Effect("a.txt", ABSENT, FileState("file", 0o644, 3, "a" * 64)),))


def dry_run(output: str = "made it\n", exit_code: int = 0, **changes: object) -> DryRun:
    """A kept dry run of `echo hi > a.txt` that created a.txt."""
    fields: dict[str, object] = {"truncated": False, "state": "pending", **changes}
    result = ToolResult(exit_code, output, truncated=bool(fields["truncated"]))
    return DryRun("d1", "echo hi > a.txt", 10.0, 70.0, result, MADE, str(fields["state"]))


@pytest.mark.parametrize(
    ("action", "judged"),
    [
        (ToolAction("shell.exec", "echo hi > a.txt"), True),
        (ToolAction("shell.exec", "python3 make.py"), True),
        (ToolAction("shell.exec", "ls -la"), False),  # provably read-only: runs at once
        (ToolAction("shell.exec", None), False),
        (ToolAction("file.write", "echo hi > a.txt"), False),  # not a shell command
    ],
)
def test_only_a_shell_command_not_proven_read_only_is_judged_by_effect(
    action: ToolAction, judged: bool
) -> None:
    assert judged_by_effect(action) is judged


def test_the_apply_action_binds_the_dry_run_and_its_effects() -> None:
    run = dry_run()
    apply = apply_action(run)
    assert (apply.capability, apply.command) == ("shell.apply", "echo hi > a.txt")
    assert apply.params == {
        "dry_run": "d1",
        "effects": MADE.digest,
        "summary": "creates 1 file: a.txt",
    }


def test_the_dry_runs_receipt_keeps_its_output_bounded_and_its_effects() -> None:
    receipt = dry_run_receipt(dry_run("x" * (MAX_OUTPUT + 5)), "parent", "quest")
    assert (receipt.action_type, receipt.action_name) == ("dry_run", "shell.exec")
    assert receipt.inputs == {"command": "echo hi > a.txt", "dry_run": "d1"}
    assert receipt.outputs == {
        "exit_code": 0,
        "output": "x" * MAX_OUTPUT,
        "truncated": True,
        "effects": MADE.for_receipt(),
    }
    assert receipt.status is ReceiptStatus.SUCCESS
    assert (receipt.parent_id, receipt.quest_id) == ("parent", "quest")
    assert receipt.metadata == {"effects_digest": MADE.digest, "kept": True}


@pytest.mark.parametrize(
    ("output", "truncated", "state", "cut", "kept"),
    [
        ("x" * MAX_OUTPUT, False, "pending", False, True),  # exactly at the bound: whole
        ("short", True, "unchanged", True, False),  # the sandbox already cut it
    ],
)
def test_a_receipt_says_truncated_only_when_output_was_cut(
    output: str, truncated: bool, state: str, cut: bool, kept: bool
) -> None:
    receipt = dry_run_receipt(dry_run(output, truncated=truncated, state=state), "p", None)
    assert receipt.outputs["output"] == output
    assert receipt.outputs["truncated"] is cut
    assert receipt.metadata["kept"] is kept


def test_the_owner_reads_the_exit_code_and_output_or_that_there_was_none() -> None:
    assert unchanged_text(dry_run("  made it\n")) == "exit 0\nmade it"
    assert unchanged_text(dry_run(" \n", exit_code=3)) == "exit 3\n(no output)"


def test_a_failed_dry_run_says_nothing_was_applied_and_what_it_would_have_done() -> None:
    assert failed_text(dry_run("no such file\n", exit_code=1)) == (
        "exit 1\nno such file\n\nIt failed, so none of its changes were applied "
        "(in its dry run it creates 1 file: a.txt)."
    )
