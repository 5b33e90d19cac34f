"""Builds the tool router: every provider of the tool fabric, with its capabilities and rank."""

from __future__ import annotations

from core.agent.catalog import built_in_tools
from core.config import Settings
from core.features import FeatureFlags
from core.tools import deploy_ops, file_ops, repo_ops, ui_builder, web_ops
from core.tools.capability import CapabilityTokens
from core.tools.definition import ProviderKit, ToolSetup
from core.tools.deploy_ops import DeployOps
from core.tools.file_ops import FileOps, HostChanges
from core.tools.repo_ops import RepoOps
from core.tools.router import ToolRouter
from core.tools.safe_repl import SafeRepl
from core.tools.tool_registry import ToolRegistry
from core.tools.ui_builder import UIBuilder
from core.tools.web_ops import WebOps
from core.tools.workspace import Workspace

SHELL = ("shell.exec",)
# Higher runs first. The Docker sandbox goes above SafeREPL, host execution (only with
# FEATURE_TOOLS_HOST_EXECUTION) between them and never in safe mode (bot/sandbox.py adds both).
SANDBOX_PRIORITY = 10
HOST_SHELL_PRIORITY = 5
SAFE_REPL_PRIORITY = 0


def build_tool_router(
    settings: Settings,
    features: FeatureFlags,
    workspace: Workspace,
    capabilities: CapabilityTokens,
    changes: HostChanges | None = None,
    defined: ToolRegistry | None = None,
) -> ToolRouter:
    """The router with SafeREPL (shell.exec fallback), the file, repo, web, UI and deploy
    providers, and those the tool definitions in `defined` bring (the built-in ones unless
    given). Safe mode (tools.safe_mode or FEATURE_SAFE_MODE) keeps only `local` ones.
    With `changes` (the effect engine), file writes, deletes and moves can be undone."""
    tools = settings.tools
    router = ToolRouter(safe_mode=lambda: tools.safe_mode or features.enabled("SAFE_MODE"))
    router.register(
        SafeRepl(workspace, capabilities), SHELL, priority=SAFE_REPL_PRIORITY, local=True
    )
    router.register(FileOps(workspace, capabilities, changes), file_ops.CAPABILITIES, local=True)
    router.register(
        RepoOps(workspace, capabilities, tools.git_author), repo_ops.CAPABILITIES, local=True
    )
    router.register(UIBuilder(workspace, capabilities), ui_builder.CAPABILITIES, local=True)
    web = WebOps(
        capabilities,
        enabled=lambda: features.enabled("TOOLS_NETWORK"),
        allowlist=tools.network_allowlist,
        timeout=tools.network_timeout_seconds,
        max_bytes=tools.max_response_bytes,
    )
    router.register(web, web_ops.CAPABILITIES)
    deploy = DeployOps(workspace, capabilities, tools.deploy_command, tools.deploy_timeout_seconds)
    router.register(deploy, deploy_ops.CAPABILITIES)
    kit = ProviderKit(settings, features, workspace, capabilities)
    _add_defined_providers(router, defined or built_in_tools(), kit)
    return router


def _add_defined_providers(router: ToolRouter, tools: ToolRegistry, kit: ProviderKit) -> None:
    """The providers that tool definitions bring (web_fetch's, web_search's, a new tool's),
    each built once for the switched-on tools that name it."""
    setup = ToolSetup(kit.settings, kit.workspace)
    for provider, capabilities in tools.providers(setup).items():
        runner = provider.build(kit)
        router.register(runner, capabilities, priority=provider.priority, local=provider.local)
