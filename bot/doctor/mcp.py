"""The doctor's look at the MCP servers of mcp.json: each started as `lancelot mcp list`
starts it, and reported ready (with its tools), switched off, or down with its reason. A
server down is worth fixing but stops nothing: Lancelot runs without it."""

from __future__ import annotations

import dataclasses

from bot.doctor.report import Finding, failed, ok, skipped
from bot.mcp import mcp_limits
from bot.mcp_cli import settle_all
from core.config import Settings
from core.mcp import ServerState, config_path, load_config
from core.receipts.redaction import Redactor

NAME = "mcp servers"


async def check_mcp(settings: Settings, connect_within: float) -> list[Finding]:
    """One finding per declared server (one for the file when it has problems)."""
    config = load_config(config_path(settings))
    found = [
        failed(NAME, problem, f"correct {config.path}", needed=False) for problem in config.problems
    ]
    if not config.servers:
        return found or [skipped(NAME, f"none declared in {config.path}")]
    limits = dataclasses.replace(mcp_limits(settings), connect_timeout=connect_within)
    redactor = Redactor(config.secrets)
    return found + [_finding(state) for state in await settle_all(config, limits, redactor)]


def _finding(state: ServerState) -> Finding:
    name = f"mcp {state.name}"
    if state.status == "ready":
        return ok(name, f"ready over {state.transport}, {len(state.tools)} tools")
    if state.status == "disabled":
        return skipped(name, "disabled in mcp.json")
    why = state.reason or f"still {state.status} after the timeout"
    return failed(name, why, f"`lancelot mcp test {state.name}` shows why", needed=False)
