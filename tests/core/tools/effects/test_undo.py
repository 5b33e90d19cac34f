"""Undo restores exactly the prior state of every path a change touched, or refuses and names
the files a later change touched; backups are content-addressed and bounded."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.tools.capability import CapabilityTokens
from core.tools.effects import (
    EffectSettings,
    ShellEffects,
    UndoRefused,
    UndoUnavailable,
)
from core.tools.sandbox import DockerEngine, SandboxLimits
from core.tools.workspace import Workspace
from tests.core.tools.effects.support import dry_run, git, hand_over, make, snapshot

BASE = {
    "a.txt": "alpha",
    "notes.md": "x" * 2150,
    "b/one": "1",
    "b/two": "2",
    "c.log": "log",
    "d/keep": "k",
    "run.sh": "#!/bin/sh\n",
}

COMMANDS = [
    "echo hi > a.txt",
    "rm -rf b c.log && : > notes.md",
    "rm -rf b && mkdir b && echo 3 > b/three",
    "mv b b2 && chmod 700 run.sh && ln -s notes.md link && mkfifo pipe",
    "rm -r d && echo x > d && rm a.txt && mkdir a.txt && echo in > a.txt/inner",
    "chmod 500 d && mkdir -p new/deep && echo n > new/deep/n && chmod 555 new",
    "rm -rf ./* && echo fresh > fresh",
]


async def apply(engine: ShellEffects, capabilities: CapabilityTokens, command: str) -> str:
    run = await dry_run(engine, capabilities, command)
    change = await engine.apply(run.id, run.effects.digest)
    return change.id


@pytest.mark.parametrize("command", COMMANDS)
async def test_undo_restores_exactly_the_prior_state(
    effects: ShellEffects, capabilities: CapabilityTokens, workspace: Workspace, command: str
) -> None:
    make(workspace.root, BASE)
    before = snapshot(workspace.root)
    change_id = await apply(effects, capabilities, command)
    assert snapshot(workspace.root) != before
    undone = await effects.undo(change_id)
    assert undone.state == "undone"
    assert snapshot(workspace.root) == before
    with pytest.raises(UndoUnavailable, match="already undone"):
        await effects.undo(change_id)


async def test_an_unknown_change_cannot_be_undone(effects: ShellEffects) -> None:
    with pytest.raises(UndoUnavailable, match="that change is unknown"):
        await effects.undo("no-such-change")


async def test_undo_restores_deleted_git_refs(
    effects: ShellEffects, capabilities: CapabilityTokens, workspace: Workspace
) -> None:
    repo = workspace.root / "repo"
    repo.mkdir(parents=True)
    git(repo, "init", "-q")
    git(repo, "commit", "-q", "--allow-empty", "-m", "one")
    git(repo, "branch", "keep")
    git(repo, "pack-refs", "--all")
    git(repo, "branch", "loose")
    hand_over(workspace.root)
    before = snapshot(workspace.root)
    command = "cd repo && git update-ref -d refs/heads/keep && git branch -D loose"
    change_id = await apply(effects, capabilities, command)
    assert "refs/heads/keep" not in (repo / ".git/packed-refs").read_text()
    await effects.undo(change_id)
    assert snapshot(workspace.root) == before


async def test_undo_refuses_when_a_later_change_touched_a_file(
    effects: ShellEffects, capabilities: CapabilityTokens, workspace: Workspace
) -> None:
    make(workspace.root, BASE)
    change_id = await apply(effects, capabilities, "echo one > a.txt; rm c.log; echo n > new")
    (workspace.root / "a.txt").write_text("the owner's later edit")
    (workspace.root / "c.log").write_text("made again")
    touched = snapshot(workspace.root)
    with pytest.raises(UndoRefused) as refused:
        await effects.undo(change_id)
    assert refused.value.paths == ("a.txt", "c.log")
    assert "a.txt, c.log" in refused.value.user_message
    assert snapshot(workspace.root) == touched  # nothing undone, not even "new"
    assert [c.id for c in await effects.recent_changes()] == [change_id]  # still offered


async def test_undo_refuses_when_a_created_directory_gained_files(
    effects: ShellEffects, capabilities: CapabilityTokens, workspace: Workspace
) -> None:
    change_id = await apply(effects, capabilities, "mkdir made && echo x > made/x")
    (workspace.root / "made" / "mine").write_text("keep me")
    with pytest.raises(UndoRefused) as refused:
        await effects.undo(change_id)
    assert refused.value.paths == ("made",)
    assert (workspace.root / "made" / "mine").read_text() == "keep me"


async def test_undo_after_a_later_change_was_itself_undone(
    effects: ShellEffects, capabilities: CapabilityTokens, workspace: Workspace
) -> None:
    make(workspace.root, BASE)
    before = snapshot(workspace.root)
    first = await apply(effects, capabilities, "echo one > a.txt")
    second = await apply(effects, capabilities, "echo two > a.txt")
    with pytest.raises(UndoRefused):
        await effects.undo(first)
    await effects.undo(second)
    await effects.undo(first)
    assert snapshot(workspace.root) == before


async def test_the_undo_window_closes(
    workspace: Workspace, home: Path, capabilities: CapabilityTokens, limits: SandboxLimits
) -> None:
    now = [1_000_000.0]
    settings = EffectSettings(pool_size=1, undo_window_seconds=3600)
    async with ShellEffects(
        DockerEngine(), workspace, home, capabilities, limits, settings, clock=lambda: now[0]
    ) as engine:
        change_id = await apply(engine, capabilities, "echo x > f")
        assert [c.id for c in await engine.recent_changes()] == [change_id]
        now[0] += 3600  # the window's last instant is past it, as /undo's list counts it
        assert await engine.recent_changes() == []
        with pytest.raises(UndoUnavailable, match="time to undo it has passed"):
            await engine.undo(change_id)


def objects(home: Path) -> list[str]:
    root = home / "undo" / "objects"
    return sorted(name for _, _, files in os.walk(root) for name in files)


async def test_backups_are_kept_by_content_and_released_after_undo(
    effects: ShellEffects, capabilities: CapabilityTokens, workspace: Workspace, home: Path
) -> None:
    make(workspace.root, {"one": "same", "two": "same", "three": "other"})
    change_id = await apply(effects, capabilities, "rm one two three")
    assert len(objects(home)) == 2  # "same" once, "other" once
    await effects.undo(change_id)
    assert objects(home) == []


async def test_backups_over_budget_or_age_are_pruned(
    workspace: Workspace, home: Path, capabilities: CapabilityTokens, limits: SandboxLimits
) -> None:
    now = [1_000_000.0]
    settings = EffectSettings(pool_size=1, backup_max_bytes=3000, backup_max_age_seconds=7 * 86400)
    make(workspace.root, {"f1": "1" * 2000, "f2": "2" * 2000, "f3": "3" * 10})
    async with ShellEffects(
        DockerEngine(), workspace, home, capabilities, limits, settings, clock=lambda: now[0]
    ) as engine:
        first = await apply(engine, capabilities, "rm f1")
        now[0] += 10
        second = await apply(engine, capabilities, "rm f2")
        now[0] += 10
        await engine.tidy()  # 4000 bytes held, 3000 allowed: the oldest goes
        with pytest.raises(UndoUnavailable):
            await engine.undo(first)
        assert len(objects(home)) == 1
        third = await apply(engine, capabilities, "rm f3")
        now[0] += 7 * 86400 + 1
        await engine.tidy()
        assert objects(home) == []
        for change_id in (second, third):
            with pytest.raises(UndoUnavailable):
                await engine.undo(change_id)
