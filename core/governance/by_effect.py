"""Shell commands judged by what they do: a dry run in a copy-on-write workspace, the Soul's
verdict on its effect set, then apply at once, or an approval card bound to that effect set.

Only a command the parser proves read-only skips the dry run. Where no dry run can be made
(no sandbox: the host shell or SafeREPL), what a command would change cannot be seen before
it happens, so it waits for the owner (T3).
"""

from __future__ import annotations

from typing import Protocol

from core.receipts.model import Receipt, ReceiptStatus
from core.receipts.registry import GovernanceReceipt
from core.tools.action import ToolAction
from core.tools.effects.records import DryRun
from soul import provably_read_only

SHELL = "shell.exec"
APPLY = "shell.apply"  # apply a kept dry run: params dry_run, effects (digest), summary
RERUN = "shell.rerun"  # the button that dry-runs a command again (its workspace changed)
MAX_OUTPUT = 2000
UNSEEN = (
    "I cannot see what this command would change before it runs (no sandbox to dry-run it "
    "in), so it needs your approval"
)


class DryRuns(Protocol):
    """What governance asks of the effect engine (core.tools.effects.ShellEffects, through
    the sandbox's wiring)."""

    async def visible(self) -> bool:
        """Whether a command can be dry-run now (the sandbox answers)."""
        ...

    async def dry_run(self, action: ToolAction, capability: str | None) -> DryRun:
        """Run `action` against an overlay of the workspace; its output and effects."""
        ...

    async def discard(self, dry_run_id: str) -> None:
        """Drop a kept dry run (the owner said no, or it lapsed)."""
        ...

    async def stale(self, dry_run_id: str) -> bool:
        """Whether a dry run was dropped at its apply because the workspace no longer
        matched it (nothing of it was applied; it can only be dry-run again)."""
        ...


def judged_by_effect(action: ToolAction) -> bool:
    """A shell command that is not provably read-only: what it does decides."""
    return (
        action.capability == SHELL
        and action.command is not None
        and not provably_read_only(action.command)
    )


def apply_action(run: DryRun) -> ToolAction:
    """The action that applies exactly this dry run's effects. Its digest covers the dry
    run's id and its effects' digest, so an approval of it binds to those effects."""
    return ToolAction(
        APPLY,
        run.command,
        {"dry_run": run.id, "effects": run.effects.digest, "summary": run.effects.summary},
    )


def dry_run_receipt(run: DryRun, parent_id: str, quest_id: str | None) -> Receipt:
    """What the dry run showed: the command's exit code and output, and its effect set."""
    result = run.result
    return Receipt(
        action_type=GovernanceReceipt.DRY_RUN,
        action_name=SHELL,
        inputs={"command": run.command, "dry_run": run.id},
        outputs={
            "exit_code": result.exit_code,
            "output": result.output[:MAX_OUTPUT],
            "truncated": result.truncated or len(result.output) > MAX_OUTPUT,
            "effects": run.effects.for_receipt(),
        },
        status=ReceiptStatus.SUCCESS,
        parent_id=parent_id,
        quest_id=quest_id,
        metadata={"effects_digest": run.effects.digest, "kept": run.state == "pending"},
    )


def unchanged_text(run: DryRun) -> str:
    """The owner's view of a command that changed nothing in the workspace."""
    output = run.result.output.strip() or "(no output)"
    return f"exit {run.result.exit_code}\n{output}"


def failed_text(run: DryRun) -> str:
    """The owner's view of a command that failed in its dry run: its changes are dropped."""
    return (
        f"{unchanged_text(run)}\n\nIt failed, so none of its changes were applied (in its "
        f"dry run it {run.effects.summary})."
    )
