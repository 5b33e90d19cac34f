"""The warm pool of dry-run slots on the real engine: a slot that cannot be made fails each
waiting dry run at once, with the engine's reason; a slot masked for the workspace as it was is
thrown away whole; a warmed pool starts its size of slots and keeps that many waiting; a
closed pool refuses."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from core.tools.capability import CapabilityTokens
from core.tools.effects import EffectSettings, ShellEffects
from core.tools.effects.overlay import SlotFactory
from core.tools.effects.pool import SlotPool
from core.tools.sandbox import DockerEngine, SandboxLimits, SandboxUnavailable
from core.tools.workspace import Workspace
from tests.core.tools.effects.support import dry_run
from tests.core.tools.sandbox.secrets_ws import SECRET
from tests.fakes.workspace import put

Pooled = Callable[[int], ShellEffects]


@pytest.fixture
def pooled(
    workspace: Workspace, home: Path, capabilities: CapabilityTokens, limits: SandboxLimits
) -> Pooled:
    """Shell effects on the real engine whose warm pool holds the given number of slots."""
    return lambda size: ShellEffects(
        DockerEngine(), workspace, home, capabilities, limits, EffectSettings(pool_size=size)
    )


async def test_a_slot_that_cannot_be_made_fails_each_waiting_take_with_the_reason(
    tmp_path: Path, docker_image: str
) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    runs = tmp_path / "dryruns"
    runs.write_text("a file where the slots' folders should go")
    engine = DockerEngine()
    pool = SlotPool(SlotFactory(engine, workspace, runs, SandboxLimits(image=docker_image)), 1)
    try:
        # The first take is told the first failure; the second has the pool try again.
        refusals = await asyncio.gather(pool.take(), pool.take(), return_exceptions=True)
    finally:
        await pool.close()
        engine.close()
    for refused in refusals:
        assert isinstance(refused, SandboxUnavailable), refused
        assert str(refused).startswith(
            "the sandbox could not start a container: [Errno 20] Not a directory"
        )


async def test_a_slot_masked_for_the_workspace_as_it_was_leaves_nothing_behind(
    pooled: Pooled, capabilities: CapabilityTokens, workspace: Workspace, home: Path
) -> None:
    async with pooled(2) as effects:
        await dry_run(effects, capabilities, "true")  # the waiting slots mask nothing
        put(workspace.root / "keys" / "server.key", f"{SECRET}\n")
        run = await dry_run(effects, capabilities, "cat keys/server.k''ey")
    assert SECRET not in run.result.output
    assert list((home / "dryruns").iterdir()) == []


async def test_a_warmed_pool_starts_its_size_of_slots_before_any_command(
    pooled: Pooled, capabilities: CapabilityTokens
) -> None:
    async with pooled(2) as effects:
        await effects.warm()
    # Leaving waits for the slots being made, then removes them.
    assert len(effects.pool.factory.launched) == 2


async def test_a_pool_keeps_as_many_slots_waiting_as_its_size(
    pooled: Pooled, capabilities: CapabilityTokens
) -> None:
    async with pooled(2) as effects:
        await effects.warm()
        await dry_run(effects, capabilities, "true")
    # Two made to wait, and one more in place of the one the dry run took (leaving waits
    # for the slots being made, then removes them).
    assert len(effects.pool.factory.launched) == 3


async def test_a_dry_run_asked_for_once_the_engine_closed_is_refused_and_makes_nothing(
    pooled: Pooled, capabilities: CapabilityTokens
) -> None:
    async with pooled(1) as effects:
        pass
    with pytest.raises(SandboxUnavailable, match=r"^the sandbox is shutting down$"):
        await dry_run(effects, capabilities, "touch ran")
    assert effects.pool.factory.launched == []
