"""Wiring: the MCP servers of mcp.json, started behind readiness on the app's supervisor."""

from __future__ import annotations

import logging

from bot.kernel import Kernel
from core.config import Settings
from core.mcp import McpLimits, McpServers, config_path, load_config
from core.receipts.redaction import Redactor
from core.runtime.backoff import BackoffConfig

log = logging.getLogger(__name__)


def mcp_limits(settings: Settings) -> McpLimits:
    """The bounds of the settings' `mcp` section."""
    mcp = settings.mcp
    return McpLimits(
        connect_timeout=mcp.connect_timeout_seconds,
        call_timeout=mcp.call_timeout_seconds,
        max_result_chars=mcp.max_result_chars,
        restart=BackoffConfig(mcp.restart_min_seconds, mcp.restart_max_seconds),
    )


async def wire_mcp(kernel: Kernel, redactor: Redactor) -> McpServers:
    """Each declared server connecting in the background (the app is ready without them);
    a bad mcp.json or entry is one warning line, and the rest start."""
    config = load_config(config_path(kernel.settings))
    for problem in config.problems:
        log.warning("MCP servers: %s", problem)
    servers = McpServers(config, redactor, kernel.tasks, mcp_limits(kernel.settings))
    return await kernel.stack.enter_async_context(servers)
