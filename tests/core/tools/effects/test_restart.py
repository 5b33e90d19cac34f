"""Pending dry runs and undoable changes survive a restart; what a previous run left behind
(expired dry runs, containers, volumes, half-made directories) is cleaned at startup."""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path

import pytest

from core.tools.capability import CapabilityTokens
from core.tools.effects import DryRunGone, EffectSettings, ShellEffects
from core.tools.effects.overlay import labels
from core.tools.effects.stage import STAGING_PREFIX
from core.tools.sandbox import DockerEngine, SandboxLimits
from core.tools.workspace import Workspace
from tests.core.tools.effects.support import dry_run, make, snapshot
from tests.core.tools.sandbox.support import inspect


def engine_for(
    workspace: Workspace,
    home: Path,
    capabilities: CapabilityTokens,
    limits: SandboxLimits,
    clock: list[float] | None = None,
) -> ShellEffects:
    settings = EffectSettings(pool_size=1, dry_run_ttl_seconds=600)
    if clock is None:
        return ShellEffects(DockerEngine(), workspace, home, capabilities, limits, settings)
    return ShellEffects(
        DockerEngine(), workspace, home, capabilities, limits, settings, clock=lambda: clock[0]
    )


async def test_approve_after_a_restart_applies_the_dry_run_and_undo_still_works(
    workspace: Workspace, home: Path, capabilities: CapabilityTokens, limits: SandboxLimits
) -> None:
    make(workspace.root, {"a.txt": "alpha", "old/x": "x"})
    before = snapshot(workspace.root)
    async with engine_for(workspace, home, capabilities, limits) as first:
        run = await dry_run(first, capabilities, "echo hi > a.txt; rm -r old; echo n > n")
    assert snapshot(workspace.root) == before
    async with engine_for(workspace, home, capabilities, limits) as second:
        kept = await second.get(run.id)
        assert kept is not None
        assert kept.state == "pending"
        assert kept.effects == run.effects
        assert kept.result == run.result
        change = await second.apply(run.id, kept.effects.digest)
    assert (workspace.root / "a.txt").read_text() == "hi\n"
    assert not (workspace.root / "old").exists()
    async with engine_for(workspace, home, capabilities, limits) as third:
        assert [c.id for c in await third.recent_changes()] == [change.id]
        await third.undo(change.id)
    assert snapshot(workspace.root) == before


async def test_dry_runs_that_expired_while_down_are_cleaned_at_startup(
    workspace: Workspace, home: Path, capabilities: CapabilityTokens, limits: SandboxLimits
) -> None:
    now = [1_000_000.0]
    async with engine_for(workspace, home, capabilities, limits, now) as first:
        old = await dry_run(first, capabilities, "echo x > f")
        fresh = await dry_run(first, capabilities, "echo y > g")
    assert (home / "dryruns" / old.id / "upper" / "f").exists()
    (home / "dryruns" / "half-made").mkdir()  # a slot a crash left half made
    (workspace.root / f"{STAGING_PREFIX}abc").mkdir()  # an apply a crash interrupted
    now[0] += 300
    async with engine_for(workspace, home, capabilities, limits, now) as second:
        now[0] += 301  # `old` is now 601 s old, `fresh` too: both past 600
        await second.tidy()
        with pytest.raises(DryRunGone, match="expired"):
            await second.apply(old.id, old.effects.digest)
        kept = await second.get(fresh.id)
        assert kept is not None
        assert kept.state == "expired"
    assert sorted(os.listdir(home / "dryruns")) == []
    assert not (workspace.root / f"{STAGING_PREFIX}abc").exists()


async def test_containers_and_volumes_a_crash_left_are_removed_at_startup(
    workspace: Workspace, home: Path, capabilities: CapabilityTokens, limits: SandboxLimits
) -> None:
    crashed = engine_for(workspace, home, capabilities, limits)
    await crashed.__aenter__()
    try:
        await crashed.warm()
        for _ in range(100):
            if crashed.pool.factory.launched:
                break
            await asyncio.sleep(0.1)
        await asyncio.sleep(1)
        left = list(crashed.pool.factory.launched)
        slots = os.listdir(home / "dryruns")
        assert left
        assert slots
        assert (home / "dryruns.out").exists()  # left before the first volume was made
        async with engine_for(workspace, home, capabilities, limits) as fresh:
            assert [await inspect(c) for c in left] == [None] * len(left)
            volumes = await volume_names()
            assert [s for s in slots if f"lancelot-dryrun-{s}" in volumes] == []
            assert set(os.listdir(home / "dryruns")).isdisjoint(slots)
            run = await dry_run(fresh, capabilities, "echo ok")
            assert run.result.output == "ok\n"
    finally:
        await crashed.__aexit__(None, None, None)


async def test_a_start_with_no_mark_leaves_the_engine_alone_until_the_pool_starts(
    workspace: Workspace, home: Path, capabilities: CapabilityTokens, limits: SandboxLimits
) -> None:
    # Something of ours the mark does not stand for (left by a version before the mark):
    # the start does not look for it; the pool's first start removes it.
    name = f"lancelot-dryrun-unmarked-{os.getpid()}"
    await make_volume(name, labels(workspace.root))
    try:
        async with engine_for(workspace, home, capabilities, limits) as effects:
            assert name in await volume_names()
            assert not (home / "dryruns.out").exists()
            await effects.warm()
            assert name not in await volume_names()
    finally:
        await remove_volume(name)


async def test_a_sweep_that_finds_nothing_left_takes_the_mark_away(
    workspace: Workspace, home: Path, capabilities: CapabilityTokens, limits: SandboxLimits
) -> None:
    async with engine_for(workspace, home, capabilities, limits) as first:
        await dry_run(first, capabilities, "echo ok")
    assert (home / "dryruns.out").exists()
    async with engine_for(workspace, home, capabilities, limits):
        assert not (home / "dryruns.out").exists()


async def make_volume(name: str, labelled: dict[str, str]) -> None:
    import docker

    def make() -> None:
        client = docker.from_env()
        try:
            client.api.create_volume(name, labels=labelled)
        finally:
            client.close()

    await asyncio.to_thread(make)


async def remove_volume(name: str) -> None:
    import docker

    def remove() -> None:
        client = docker.from_env()
        try:
            with contextlib.suppress(docker.errors.NotFound):
                client.api.remove_volume(name, force=True)
        finally:
            client.close()

    await asyncio.to_thread(remove)


async def volume_names() -> set[str]:
    import docker

    def names() -> set[str]:
        client = docker.from_env()
        try:
            found = client.api.volumes() or {}
            return {v["Name"] for v in found.get("Volumes") or ()}
        finally:
            client.close()

    return await asyncio.to_thread(names)
