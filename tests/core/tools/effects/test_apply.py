"""Apply commits exactly the dry run's effects (the workspace ends as if the command had run
there), refuses when the workspace changed under the dry run, and never runs it again."""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from core.tools.capability import CapabilityTokens
from core.tools.effects import (
    DigestMismatch,
    DryRunGone,
    EffectSettings,
    ShellEffects,
    StaleEffects,
)
from core.tools.sandbox import DockerEngine, DockerSandbox, SandboxLimits
from core.tools.workspace import Workspace
from tests.core.tools.effects.support import dry_run, make, snapshot
from tests.core.tools.sandbox.support import run as run_for_real

BASE = {
    "a.txt": "alpha",
    "notes.md": "x" * 2150,
    "b/one": "1",
    "b/two": "2",
    "c.log": "log",
    "d/keep": "k",
    "deep/er/still/file": "deep",
}

COMMANDS = [
    "echo hi > a.txt",
    "echo hi > new.txt && mkdir -p x/y && echo z > x/y/z",
    "rm -rf b && mkdir b && echo 3 > b/three",
    "mv b b2 && chmod 600 notes.md && ln -s notes.md link",
    "rm -r d && echo x > d",
    "rm a.txt && mkdir a.txt && echo in > a.txt/inner",
    "rm c.log && ln -s /etc/passwd c.log",
    "chmod 555 d",
    "mkdir ro && echo f > ro/f && chmod 500 ro",
    "mkfifo pipe && ln b/one hard",
    "rm -rf ./* && echo fresh > fresh",
    "chmod -R 000 deep; chmod 700 .",
    "yes lancelot | head -c 3000000 > big && cp big b/one",
]


@pytest.fixture
async def real_shell(
    tmp_path: Path, capabilities: CapabilityTokens, limits: SandboxLimits
) -> AsyncIterator[tuple[DockerSandbox, Workspace]]:
    """The old way, as the oracle: the same command run for real on a copy of the workspace."""
    copy = Workspace(tmp_path / "copy")
    async with DockerSandbox(DockerEngine(), copy, capabilities, limits) as box:
        yield box, copy


@pytest.mark.parametrize("command", COMMANDS)
async def test_apply_leaves_the_workspace_as_running_the_command_would(
    effects: ShellEffects,
    capabilities: CapabilityTokens,
    workspace: Workspace,
    real_shell: tuple[DockerSandbox, Workspace],
    command: str,
) -> None:
    box, copy = real_shell
    make(workspace.root, BASE)
    make(copy.root, BASE)
    ran = await run_for_real(box, capabilities, command)
    run = await dry_run(effects, capabilities, command)
    assert (run.result.exit_code, run.result.output) == (ran.exit_code, ran.output)
    change = await effects.apply(run.id, run.effects.digest)
    assert snapshot(workspace.root) == snapshot(copy.root)
    assert change.effects.digest == run.effects.digest
    assert not (workspace.root.parent / "dryruns" / run.id).exists()
    assert [p for p in os.listdir(workspace.root) if p.startswith(".lancelot")] == []


async def test_a_file_changed_since_the_dry_run_stops_the_apply(
    effects: ShellEffects, capabilities: CapabilityTokens, workspace: Workspace
) -> None:
    make(workspace.root, BASE)
    run = await dry_run(effects, capabilities, "echo new > a.txt; rm c.log; echo n > n")
    (workspace.root / "a.txt").write_text("the owner's edit")
    before = snapshot(workspace.root)
    with pytest.raises(StaleEffects) as refused:
        await effects.apply(run.id, run.effects.digest)
    assert refused.value.paths == ("a.txt",)
    assert "a.txt" in refused.value.user_message
    assert snapshot(workspace.root) == before  # nothing applied, not even the other effects
    await effects.discard(run.id)
    with pytest.raises(DryRunGone):
        await effects.apply(run.id, run.effects.digest)


async def test_a_path_that_appeared_or_a_directory_that_grew_is_stale(
    effects: ShellEffects, capabilities: CapabilityTokens, workspace: Workspace
) -> None:
    make(workspace.root, BASE)
    run = await dry_run(effects, capabilities, "echo n > n; rm -r b")
    (workspace.root / "n").write_text("mine")
    (workspace.root / "b" / "three").write_text("3")
    with pytest.raises(StaleEffects) as refused:
        await effects.apply(run.id, run.effects.digest)
    assert refused.value.paths == ("b", "n")


async def test_a_directory_swapped_for_a_symlink_cannot_lead_the_apply_outside(
    effects: ShellEffects, capabilities: CapabilityTokens, workspace: Workspace, tmp_path: Path
) -> None:
    make(workspace.root, BASE)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "one").write_text("precious")
    run = await dry_run(effects, capabilities, "echo x > b/new; rm b/one")
    shutil.rmtree(workspace.root / "b")
    (workspace.root / "b").symlink_to(outside)
    with pytest.raises(StaleEffects) as refused:
        await effects.apply(run.id, run.effects.digest)
    assert set(refused.value.paths) == {"b/new", "b/one"}
    assert sorted(os.listdir(outside)) == ["one"]
    assert (outside / "one").read_text() == "precious"


async def test_only_the_effects_shown_can_be_applied(
    effects: ShellEffects, capabilities: CapabilityTokens, workspace: Workspace
) -> None:
    make(workspace.root, BASE)
    run = await dry_run(effects, capabilities, "rm a.txt")
    other = await dry_run(effects, capabilities, "rm c.log")
    with pytest.raises(DigestMismatch):
        await effects.apply(run.id, other.effects.digest)
    assert (workspace.root / "a.txt").exists()
    await effects.apply(run.id, run.effects.digest)
    with pytest.raises(DryRunGone, match="already applied"):
        await effects.apply(run.id, run.effects.digest)


async def test_an_unknown_dry_run_cannot_be_applied(effects: ShellEffects) -> None:
    with pytest.raises(DryRunGone, match="is unknown"):
        await effects.apply("no-such-dry-run", "0" * 64)


async def test_apply_runs_nothing_again(
    effects: ShellEffects, capabilities: CapabilityTokens, workspace: Workspace
) -> None:
    run = await dry_run(effects, capabilities, "date +%s%N > stamp")
    shown = run.effects.effects[0].after.sha256
    launched = len(effects.pool.factory.launched)
    await effects.apply(run.id, run.effects.digest)
    written = (workspace.root / "stamp").read_bytes()
    import hashlib

    assert hashlib.sha256(written).hexdigest() == shown
    assert len(effects.pool.factory.launched) - launched <= effects.settings.pool_size
    assert not (workspace.root.parent / "dryruns" / run.id).exists()  # its copy is let go


async def test_a_dry_run_expires(
    workspace: Workspace, home: Path, capabilities: CapabilityTokens, limits: SandboxLimits
) -> None:
    now = [1_000_000.0]
    settings = EffectSettings(pool_size=1, dry_run_ttl_seconds=60)
    async with ShellEffects(
        DockerEngine(), workspace, home, capabilities, limits, settings, clock=lambda: now[0]
    ) as engine:
        run = await dry_run(engine, capabilities, "echo x > f")
        now[0] += 60  # at its very deadline, as the start-up's tidying counts it
        with pytest.raises(DryRunGone, match="has expired"):
            await engine.apply(run.id, run.effects.digest)
        kept = await engine.get(run.id)
        assert kept is not None
        assert kept.state == "expired"
    assert not (workspace.root / "f").exists()
    assert not (home / "dryruns" / run.id).exists()


async def test_a_dry_run_whose_copy_was_lost_is_gone(
    effects: ShellEffects, capabilities: CapabilityTokens, workspace: Workspace, home: Path
) -> None:
    run = await dry_run(effects, capabilities, "echo x > f")
    shutil.rmtree(home / "dryruns" / run.id)
    with pytest.raises(DryRunGone, match="lost its dry-run copy"):
        await effects.apply(run.id, run.effects.digest)
    with pytest.raises(DryRunGone, match="was already discarded"):
        await effects.apply(run.id, run.effects.digest)
    assert not (workspace.root / "f").exists()
