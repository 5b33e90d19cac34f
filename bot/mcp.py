"""Wiring: the MCP servers of mcp.json, started behind readiness on the app's supervisor
(a `"sandbox": true` one inside the shell's sandbox); their tools followed into the tool
registry, run by one governed provider, and switched from /mcp."""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator, Mapping
from functools import partial
from pathlib import Path

from bot.governance import GovernanceKit
from bot.kernel import Kernel
from bot.sandbox import sandbox_limits
from core.agent.mcp_commands import McpCommands
from core.agent.mcp_runner import McpRunner
from core.agent.mcp_tools import McpToolFollower
from core.agent.tool_search import FIND, ToolFinder, find_tools_definition
from core.config import Settings
from core.mcp import McpLimits, McpServers, config_path, load_config
from core.mcp.choices import McpChoices
from core.mcp.config import StdioServer
from core.mcp.naming import PREFIX
from core.mcp.supervisor import Confinement
from core.receipts.redaction import Redactor
from core.runtime.backoff import BackoffConfig
from core.tools.sandbox import DockerEngine
from core.tools.sandbox.interactive import InteractiveProgram, SandboxedPrograms
from core.tools.sandbox.masks import StandIns
from soul.schema import Tier

log = logging.getLogger(__name__)

# What the docker command needs of Lancelot's environment to reach the engine (a server's
# program gets none of it: only its entry's own variables pass into the container).
DOCKER_ENV = ("DOCKER_HOST", "DOCKER_CONTEXT", "DOCKER_CONFIG", "DOCKER_CERT_PATH",
              "DOCKER_TLS_VERIFY")  # fmt: skip


def mcp_limits(settings: Settings) -> McpLimits:
    """The bounds of the settings' `mcp` section."""
    mcp = settings.mcp
    return McpLimits(
        connect_timeout=mcp.connect_timeout_seconds,
        call_timeout=mcp.call_timeout_seconds,
        max_result_chars=mcp.max_result_chars,
        restart=BackoffConfig(mcp.restart_min_seconds, mcp.restart_max_seconds),
    )


def sandboxed(
    settings: Settings, home: Path, engine: DockerEngine, stand_ins: StandIns
) -> Confinement:
    """How a `"sandbox": true` server runs: in a container of the shell's sandbox image,
    with its hardening and limits, the workspace mounted with its sensitive files masked,
    no network unless the entry says `"network": true`."""
    programs = SandboxedPrograms(engine, sandbox_limits(settings), home / "workspace", stand_ins)

    async def confine(entry: StdioServer) -> StdioServer:
        program = InteractiveProgram(entry.command, entry.args, tuple(entry.env), entry.network)
        argv = await programs.command(program)
        reach = {name: os.environ[name] for name in DOCKER_ENV if name in os.environ}
        return StdioServer(command=argv[0], args=tuple(argv[1:]), env={**entry.env, **reach})

    return confine


@contextlib.contextmanager
def sandbox_for(settings: Settings, home: Path) -> Iterator[Confinement]:
    """The sandbox `"sandbox": true` servers run in, for as long as the block runs."""
    engine, stand_ins = DockerEngine(), StandIns()
    try:
        yield sandboxed(settings, home, engine, stand_ins)
    finally:
        stand_ins.close()
        engine.close()


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
    sandbox = kernel.stack.enter_context(sandbox_for(kernel.settings, kernel.home))
    limits = mcp_limits(kernel.settings)
    servers = McpServers(config, redactor, kernel.tasks, limits, choices.switched_off(), sandbox)
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
