"""Lancelot with real MCP servers declared in its home's mcp.json, a phone and a scripted
model: the whole app, as the owner would run it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from core.config import load_settings
from core.features import FeatureFlags
from core.mcp import ServerState
from tests.core.agent.stage import Stage

READY_WITHIN = 60.0


def declare(home: Path, servers: dict[str, Any]) -> None:
    """Write `servers` into the home's mcp.json."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "mcp.json").write_text(json.dumps({"mcpServers": servers}))


async def settled(lancelot: Stage, server: str) -> ServerState:
    """`server`'s state once it is ready (or failed, or off)."""
    return await lancelot.app.mcp.wait_for(
        server, lambda s: s.status in ("ready", "failed", "disabled"), READY_WITHIN
    )


@asynccontextmanager
async def mcp_stage(
    tmp_path: Path,
    servers: dict[str, Any],
    expect_failed: tuple[str, ...] = (),
    environ: dict[str, str] | None = None,
) -> AsyncIterator[Stage]:
    """A fresh Lancelot whose mcp.json declares `servers`, each waited for until settled
    (ready or off, or failed for those in `expect_failed`); `environ` adds settings."""
    home = tmp_path / "home"
    declare(home, servers)
    settings = load_settings(environ={"LANCELOT_HOME": str(home), **(environ or {})})
    running = Stage(settings, FeatureFlags(environ={}))
    await running.start()
    try:
        for name in servers:
            state = await settled(running, name)
            expected = ("failed",) if name in expect_failed else ("ready", "disabled")
            assert state.status in expected, state.reason
        yield running
    finally:
        await running.stop()
