"""Edges: odd file names, trees too deep to show, the userxattr overlay a non-root Lancelot
uses, paths a mount option cannot carry."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from core.tools.capability import CapabilityTokens
from core.tools.effects import ShellEffects
from core.tools.effects.command import run_in_slot
from core.tools.effects.overlay import SlotFactory, mount_options
from core.tools.effects.scan import EffectsTooLarge, scan_upper
from core.tools.sandbox import DockerEngine, SandboxLimits, SandboxUnavailable
from core.tools.workspace import Workspace
from tests.core.tools.effects.support import dry_run, kinds, make, snapshot


async def test_names_that_are_not_utf8_or_hold_newlines_survive_apply_and_undo(
    effects: ShellEffects, capabilities: CapabilityTokens, workspace: Workspace
) -> None:
    make(workspace.root, {"plain": "p"})
    before = snapshot(workspace.root)
    run = await dry_run(
        effects, capabilities, "echo a > \"$(printf 'bad\\377name')\"; echo b > 'two\nlines'"
    )
    assert len(run.effects.effects) == 2
    assert run.effects.summary == "creates 2 files: bad\\xffname, two\\nlines"
    change = await effects.apply(run.id, run.effects.digest)
    names = sorted(os.listdir(os.fsencode(workspace.root)))
    assert names == [b"bad\xffname", b"plain", b"two\nlines"]
    assert change.effects.file_changes()["/workspace/two\nlines"] is not None
    await effects.undo(change.id)
    assert snapshot(workspace.root) == before


async def test_a_tree_too_deep_to_show_is_refused_and_nothing_kept(
    effects: ShellEffects, capabilities: CapabilityTokens, workspace: Workspace, home: Path
) -> None:
    with pytest.raises(EffectsTooLarge):
        await dry_run(effects, capabilities, "mkdir -p $(printf 'a/%.0s' $(seq 210))")
    await asyncio.sleep(0.5)
    assert os.listdir(workspace.root) == []


async def test_opaque_directories_are_read_from_user_xattrs_when_mounted_with_userxattr(
    workspace: Workspace, home: Path, limits: SandboxLimits
) -> None:
    make(workspace.root, {"b/one": "1", "b/two": "2"})
    engine = DockerEngine()
    factory = SlotFactory(engine, workspace.root, home / "dryruns", limits)
    factory.userxattr = True  # as a Lancelot that is not root mounts it
    slot = await asyncio.to_thread(factory.create)
    try:
        result = await run_in_slot(engine, slot, "rm -rf b && mkdir b && echo 3 > b/three", 5)
        assert result.exit_code == 0, result.output
        assert os.getxattr(slot.upper / "b", "user.overlay.opaque") == b"y"
        found = scan_upper(slot.upper, workspace.root, factory.opaque_xattr)
        assert {e.path: e.kind for e in found.effects} == {
            "b/one": "deleted",
            "b/two": "deleted",
            "b/three": "created",
        }
    finally:
        await asyncio.to_thread(factory.remove, slot)
        engine.close()


def test_a_data_directory_a_mount_option_cannot_carry_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SandboxUnavailable, match="without ','"):
        mount_options(tmp_path / "a,b", tmp_path / "run", userxattr=False)


async def test_health_says_when_dry_runs_can_run(effects: ShellEffects) -> None:
    assert await effects.health() is None


async def test_a_dry_run_after_the_workspace_changed_sees_the_change(
    effects: ShellEffects, capabilities: CapabilityTokens, workspace: Workspace
) -> None:
    await effects.warm()
    await asyncio.sleep(1)  # the slots' overlays are mounted before the change below
    make(workspace.root, {"late.txt": "new content"})
    run = await dry_run(effects, capabilities, "cat late.txt && rm late.txt")
    assert run.result.output == "new content"
    assert kinds(run) == {"late.txt": "deleted"}


async def test_a_missing_image_fails_the_dry_run_clearly_and_runs_nothing(
    workspace: Workspace, home: Path, capabilities: CapabilityTokens, docker_image: str
) -> None:
    limits = SandboxLimits(image="lancelot-sandbox:not-built-here")
    async with ShellEffects(DockerEngine(), workspace, home, capabilities, limits) as engine:
        assert "run `lancelot sandbox build`" in (await engine.health() or "")
        with pytest.raises(SandboxUnavailable, match="not-built-here is missing"):
            await dry_run(engine, capabilities, "touch ran")
    assert os.listdir(workspace.root) == []
    assert not (home / "dryruns").exists()
