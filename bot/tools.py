"""Builds the tool router: every provider of the tool fabric, with its capabilities and rank."""

from __future__ import annotations

from core.config import Settings
from core.config.settings import LookupSettings
from core.features import FeatureFlags
from core.security.sanitizer import Sanitizer
from core.tools import deploy_ops, file_ops, repo_ops, ui_builder, web_fetch, web_ops, web_search
from core.tools.capability import CapabilityTokens
from core.tools.deploy_ops import DeployOps
from core.tools.file_ops import FileOps, HostChanges
from core.tools.repo_ops import RepoOps
from core.tools.router import ToolRouter
from core.tools.safe_repl import SafeRepl
from core.tools.search_api import DEFAULT_BASES, SearchApi
from core.tools.ui_builder import UIBuilder
from core.tools.web_fetch import FetchLimits, WebFetch
from core.tools.web_ops import WebOps
from core.tools.web_search import WebSearch
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
) -> ToolRouter:
    """The router with SafeREPL (shell.exec fallback) and the file, repo, web, UI and deploy
    providers. Safe mode (tools.safe_mode or FEATURE_SAFE_MODE) keeps only `local` ones.
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
    _add_web_lookups(router, settings.lookups, capabilities)
    return router


def _add_web_lookups(
    router: ToolRouter, lookups: LookupSettings, capabilities: CapabilityTokens
) -> None:
    """web.fetch and web.search, each only when configured (not local: safe mode drops them)."""
    if lookups.fetch_enabled:
        limits = FetchLimits.of(
            lookups.fetch_allowlist,
            lookups.fetch_private_hosts,
            lookups.fetch_max_bytes,
            lookups.fetch_max_chars,
            lookups.fetch_timeout_seconds,
        )
        router.register(WebFetch(capabilities, limits, Sanitizer()), web_fetch.CAPABILITIES)
    if lookups.search_provider is not None:
        key = lookups.search_api_key
        api = SearchApi(
            lookups.search_provider,
            lookups.search_url or DEFAULT_BASES[lookups.search_provider],
            key.get_secret_value() if key is not None else None,
            lookups.search_results,
            lookups.search_timeout_seconds,
        )
        router.register(WebSearch(capabilities, api, Sanitizer()), web_search.CAPABILITIES)
