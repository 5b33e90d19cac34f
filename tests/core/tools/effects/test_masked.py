"""The dry run (the `/run` path) reads, writes and deletes no sensitive file: its output
holds no secret, its effects never name one, and an apply never loses one."""

from __future__ import annotations

import shutil

import pytest

from core.tools.action import ToolAction
from core.tools.capability import CapabilityTokens
from core.tools.effects import ShellEffects
from core.tools.workspace import Workspace
from tests.core.tools.effects.support import git
from tests.core.tools.sandbox.secrets_ws import READS, SECRET, intact, leaks, make_repo, plant
from tests.fakes.workspace import put


async def dry_run(effects: ShellEffects, caps: CapabilityTokens, command: str):  # type: ignore[no-untyped-def]
    action = ToolAction("shell.exec", command)
    return await effects.dry_run(action, caps.issue(action.digest))


@pytest.mark.parametrize("command", READS)
async def test_a_dry_run_reads_no_secret(
    effects: ShellEffects, capabilities: CapabilityTokens, workspace: Workspace, command: str
) -> None:
    planted = plant(workspace.root)
    run = await dry_run(effects, capabilities, command)
    assert not leaks(run.result.output), run.result.output
    assert intact(workspace.root, planted)


async def test_a_dry_run_never_shows_a_masked_file_changed(
    effects: ShellEffects, capabilities: CapabilityTokens, workspace: Workspace
) -> None:
    plant(workspace.root)
    for command in ("rm -f .env", "echo x > .env", "mv .env notes/gone", "rm -rf .ssh .git"):
        run = await dry_run(effects, capabilities, command)
        assert run.result.exit_code != 0, command
        paths = {effect.path for effect in run.effects.effects}
        assert not paths & {".env", ".ssh", ".ssh/id_rsa", ".git/config"}, (command, paths)


async def test_an_applied_copy_of_the_workspace_holds_no_secret(
    effects: ShellEffects, capabilities: CapabilityTokens, workspace: Workspace
) -> None:
    planted = plant(workspace.root)
    run = await dry_run(effects, capabilities, "mkdir copy && cp -r .env notes .ssh copy/")
    assert run.result.exit_code == 0, run.result.output
    await effects.apply(run.id, run.effects.digest)
    copied = workspace.root / "copy"
    assert (copied / ".env").read_text() == ""
    assert (copied / "notes" / "innocent.txt").read_text() == ""
    assert list((copied / ".ssh").iterdir()) == []
    assert intact(workspace.root, planted)


async def test_a_sensitive_file_added_after_the_slots_were_made_is_masked(
    effects: ShellEffects, capabilities: CapabilityTokens, workspace: Workspace
) -> None:
    await dry_run(effects, capabilities, "true")  # the waiting slots mask nothing
    put(workspace.root / "keys" / "server.key", f"{SECRET}\n")
    run = await dry_run(effects, capabilities, "cat keys/server.k''ey")
    assert SECRET not in run.result.output


async def test_git_works_in_a_dry_run_after_the_repository_was_made_again(
    effects: ShellEffects, capabilities: CapabilityTokens, workspace: Workspace
) -> None:
    """The waiting slots' masks were made on the old .git: a slot that would show the
    old, removed folders is never used."""
    make_repo(workspace.root)
    await dry_run(effects, capabilities, "true")  # the waiting slots mask the old config
    shutil.rmtree(workspace.root / ".git")
    make_repo(workspace.root)
    run = await dry_run(effects, capabilities, "git status --short && git log --oneline")
    assert run.result.exit_code == 0, run.result.output
    assert "one" in run.result.output
    assert run.effects.effects == ()


async def test_a_masked_config_is_never_changed_nor_lost_on_apply(
    effects: ShellEffects, capabilities: CapabilityTokens, workspace: Workspace
) -> None:
    make_repo(workspace.root)
    config = (workspace.root / ".git" / "config").read_text()
    for command in ("git remote add evil /tmp/evil", "git config core.pager cat"):
        run = await dry_run(effects, capabilities, command)
        assert run.result.exit_code != 0, command
        assert ".git/config" not in {effect.path for effect in run.effects.effects}, command
    commit = "git -c user.name=t -c user.email=t@example.org commit -q --allow-empty -m two"
    run = await dry_run(effects, capabilities, commit)
    assert run.result.exit_code == 0, run.result.output
    await effects.apply(run.id, run.effects.digest)
    assert (workspace.root / ".git" / "config").read_text() == config
    assert "two" in git(workspace.root, "-c", "safe.directory=*", "log", "--oneline")
