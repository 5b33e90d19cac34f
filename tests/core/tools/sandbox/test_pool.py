"""The warm pool: containers a crash left behind go at the next start; only ours; none leak."""

from __future__ import annotations

import asyncio
from pathlib import Path

from core.tools.capability import CapabilityTokens
from core.tools.sandbox import DockerEngine, DockerSandbox, SandboxLimits
from core.tools.workspace import Workspace
from tests.core.tools.sandbox.support import inspect, run


async def test_stale_containers_of_this_home_are_removed_at_start_and_no_others(
    workspace: Workspace, capabilities: CapabilityTokens, limits: SandboxLimits, tmp_path: Path
) -> None:
    crashed = DockerSandbox(DockerEngine(), workspace, capabilities, limits)
    neighbour = DockerSandbox(
        DockerEngine(), Workspace(tmp_path / "another-home"), capabilities, limits
    )
    try:
        await run(crashed, capabilities, "true")  # never closed: as if the process died
        await run(neighbour, capabilities, "true")
        left = list(crashed.pool.launched)
        async with DockerSandbox(DockerEngine(), workspace, capabilities, limits) as fresh:
            assert (await run(fresh, capabilities, "echo fresh")).output == "fresh\n"
            assert [await inspect(c) for c in left] == [None] * len(left)
            assert None not in [await inspect(c) for c in neighbour.pool.launched]
            owned = fresh.pool.launched
        assert [await inspect(c) for c in owned] == [None] * len(owned)  # closed: all removed
    finally:
        await crashed.pool.close()
        await neighbour.pool.close()


async def test_a_burst_runs_at_once_and_the_pool_shrinks_back_to_its_size(
    sandbox: DockerSandbox, capabilities: CapabilityTokens, limits: SandboxLimits
) -> None:
    burst = [run(sandbox, capabilities, f"sleep 1; echo {n}") for n in range(limits.pool_size + 1)]
    results = await asyncio.gather(*burst)
    assert [r.output for r in results] == [f"{n}\n" for n in range(limits.pool_size + 1)]
    for _ in range(4):
        await run(sandbox, capabilities, "true")
    for _ in range(50):  # the extra container goes once it is back from its command
        live = [c for c in sandbox.pool.launched if await inspect(c) is not None]
        if len(live) == limits.pool_size:
            break
        await asyncio.sleep(0.1)
    assert len(live) == limits.pool_size
