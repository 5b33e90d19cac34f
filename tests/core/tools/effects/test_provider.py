"""The effect engine as governance uses it: `shell.apply` commits a kept dry run only with its
own capability and answers with the dry run's result; a Deny discards it; a dry run dropped
at its apply is told as stale (real sandbox)."""

from __future__ import annotations

import pytest

from core.errors import PolicyDenied, ToolFailed
from core.tools.action import ToolAction
from core.tools.capability import CapabilityTokens
from core.tools.effects import DryRunGone, ShellEffects
from core.tools.effects.provider import APPLY, EffectApplier, SandboxDryRuns
from core.tools.effects.records import DryRun
from core.tools.workspace import Workspace
from tests.core.tools.effects.support import dry_run, make


async def available() -> str | None:
    """The sandbox answers (what bot/sandbox.py asks of it)."""
    return None


def apply_action(run: DryRun) -> ToolAction:
    return ToolAction(APPLY, run.command, {"dry_run": run.id, "effects": run.effects.digest})


async def test_an_apply_answers_with_the_dry_runs_own_result(
    effects: ShellEffects, capabilities: CapabilityTokens, workspace: Workspace
) -> None:
    run = await dry_run(effects, capabilities, "echo said; echo new > made.txt; exit 3")
    action = apply_action(run)
    result = await EffectApplier(effects, capabilities).run(
        action, capabilities.issue(action.digest)
    )
    assert (result.exit_code, result.output) == (3, "said\n")
    assert result.provider == "docker_dry_run"
    assert result.file_changes == {"/workspace/made.txt": run.effects.effects[0].after.sha256}
    assert (workspace.root / "made.txt").read_text() == "new\n"


async def test_an_apply_without_its_own_capability_changes_nothing(
    effects: ShellEffects, capabilities: CapabilityTokens, workspace: Workspace
) -> None:
    run = await dry_run(effects, capabilities, "echo new > made.txt")
    action = apply_action(run)
    other = ToolAction(APPLY, "echo other", {"dry_run": run.id, "effects": "0" * 64})
    applier = EffectApplier(effects, capabilities)
    for token in (None, capabilities.issue(other.digest)):
        with pytest.raises(PolicyDenied):
            await applier.run(action, token)
    assert not (workspace.root / "made.txt").exists()
    assert (await effects.get(run.id)) == run  # still pending, as it was


async def test_a_denied_dry_run_is_discarded_and_cannot_be_applied_after(
    effects: ShellEffects, capabilities: CapabilityTokens, workspace: Workspace
) -> None:
    run = await dry_run(effects, capabilities, "echo new > made.txt")
    dry_runs = SandboxDryRuns(effects, available)
    assert await dry_runs.visible()
    await dry_runs.discard(run.id)
    kept = await effects.get(run.id)
    assert kept is not None
    assert kept.state == "discarded"
    action = apply_action(run)
    with pytest.raises(ToolFailed, match=r"^That change was already discarded\.$"):
        await EffectApplier(effects, capabilities).run(action, capabilities.issue(action.digest))
    with pytest.raises(DryRunGone):
        await effects.apply(run.id, run.effects.digest)
    assert not (workspace.root / "made.txt").exists()


async def test_only_a_dry_run_dropped_at_its_apply_is_stale(
    effects: ShellEffects, capabilities: CapabilityTokens, workspace: Workspace
) -> None:
    make(workspace.root, {"notes.md": "draft"})
    run = await dry_run(effects, capabilities, "rm notes.md")
    dry_runs = SandboxDryRuns(effects, available)
    assert not await dry_runs.stale(run.id)  # pending
    assert not await dry_runs.stale("no-such-dry-run")
    (workspace.root / "notes.md").write_text("rewritten since")
    action = apply_action(run)
    with pytest.raises(ToolFailed):
        await EffectApplier(effects, capabilities).run(action, capabilities.issue(action.digest))
    assert await dry_runs.stale(run.id)
    assert (workspace.root / "notes.md").read_text() == "rewritten since"
