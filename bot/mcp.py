"""Wiring: the MCP servers of mcp.json, started behind readiness on the app's supervisor;
their tools followed into the tool registry, run by one governed provider, and switched
from /mcp."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from functools import partial

from bot.governance import GovernanceKit
from bot.kernel import Kernel
from core.agent.mcp_commands import McpCommands
from core.agent.mcp_runner import McpRunner
from core.agent.mcp_tools import McpToolFollower
from core.agent.tool_search import FIND, ToolFinder, find_tools_definition
from core.config import Settings
from core.mcp import McpLimits, McpServers, config_path, load_config
from core.mcp.choices import McpChoices
from core.mcp.naming import PREFIX
from core.receipts.redaction import Redactor
from core.runtime.backoff import BackoffConfig
from soul.schema import Tier

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


async def wire_mcp(
    kernel: Kernel, redactor: Redactor, kit: GovernanceKit | None, choices: McpChoices
) -> McpServers:
    """Each declared server connecting in the background (the app is ready without them);
    a bad mcp.json or entry is one warning line, and the rest start. Without governance
    (FEATURE_SOUL off) the servers run but their tools are offered to no model. `choices`:
    the owner's from /mcp, which governance reads too."""
    config = load_config(config_path(kernel.settings))
    for problem in config.problems:
        log.warning("MCP servers: %s", problem)
    servers = McpServers(
        config, redactor, kernel.tasks, mcp_limits(kernel.settings), choices.switched_off()
    )
    follower = McpToolFollower(kernel.tools, choices)
    servers.on_change(follower.follow)
    kernel.tools.add(find_tools_definition(kernel.tools))  # offered once tools are many
    if kit is not None:
        runner = McpRunner(servers, kit.capabilities, choices, kernel.ledger, redactor)
        kit.tools.register_prefix(runner, PREFIX)
        finder = ToolFinder(kernel.tools, kernel.settings, kit.capabilities)
        kit.tools.register(finder, [FIND], local=True)

    def soul_rules() -> Mapping[str, Mapping[str, Tier]]:
        return kit.keeper().risk_rules.mcp if kit is not None else {}

    McpCommands(
        kernel.commands, servers, choices, follower, kernel.tokens, kernel.ledger, soul_rules
    ).register()
    for state in servers.states():  # a server down degrades Lancelot, never unreadies it
        kernel.health.register(
            f"mcp {state.name}", partial(servers.health, state.name), optional=True
        )
    kernel.status_fields["MCP servers"] = servers.summary
    return await kernel.stack.enter_async_context(servers)
