"""A command whose caller is stopped goes with its container: nothing keeps running."""

from __future__ import annotations

import asyncio
import time

import pytest

from core.tools.capability import CapabilityTokens
from core.tools.sandbox import DockerSandbox
from core.tools.workspace import Workspace

from .support import inspect, run


async def test_a_cancelled_command_is_killed_with_its_container(
    sandbox: DockerSandbox, capabilities: CapabilityTokens, workspace: Workspace
) -> None:
    command = "hostname > /workspace/box; tail -f /dev/null"  # runs until killed
    running = asyncio.create_task(run(sandbox, capabilities, command))
    marker = workspace.root / "box"
    async with asyncio.timeout(30):
        while not marker.exists() or not marker.read_text().strip():  # noqa: ASYNC110 (a file)
            await asyncio.sleep(0.05)
    box = marker.read_text().strip()
    assert (await inspect(box) or {}).get("State", {}).get("Running")

    cancelled = time.monotonic()
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    took = time.monotonic() - cancelled

    state = await inspect(box)
    assert state is None or not state["State"]["Running"]  # killed, not left to its timeout
    assert took < sandbox.limits.timeout_seconds
