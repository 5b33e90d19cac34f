"""Every tool the model can be offered has a flow (what its output carries, what it sends or
changes) and a tier in the shipped Soul: a tool added without either fails here, before a
fooled model can use it unjudged."""

from __future__ import annotations

from pathlib import Path

from bot.agent import agent_tools
from core.agent.tools import ToolTable
from core.config import load_settings
from core.governance.flow import FLOWS
from core.tools.workspace import Workspace
from soul import SHIPPED_VERSIONS_DIR, SoulStore


def everything_offered(tmp_path: Path) -> ToolTable:
    """The table with every tool switched on: governance, memory, fetch and search."""
    settings = load_settings(
        environ={
            "LANCELOT_HOME": str(tmp_path),
            "LANCELOT_LOOKUPS_FETCH_ALLOWLIST": "*",
            "LANCELOT_LOOKUPS_SEARCH_PROVIDER": "searxng",
            "LANCELOT_LOOKUPS_SEARCH_URL": "http://127.0.0.1:9/",
        }
    )
    return agent_tools(settings, Workspace(tmp_path / "workspace"), True, True)


def test_everything_is_offered_when_switched_on(tmp_path: Path) -> None:
    names = set(everything_offered(tmp_path).capabilities())
    assert {"web_fetch", "web_search", "remember", "forget", "propose_job"} <= names


def test_every_offered_tool_has_a_flow(tmp_path: Path) -> None:
    table = everything_offered(tmp_path)
    missing = {n: c for n, c in table.capabilities().items() if c not in FLOWS}
    assert missing == {}, f"tools without a flow in core/governance/flow.py: {missing}"


def test_every_offered_tool_has_a_tier_in_the_shipped_soul(tmp_path: Path) -> None:
    soul = SoulStore(SHIPPED_VERSIONS_DIR, tmp_path / "soul").load_active()
    ruled = {rule.capability for rule in soul.risk_rules.rules}
    table = everything_offered(tmp_path)
    missing = {n: c for n, c in table.capabilities().items() if c not in ruled}
    assert missing == {}, f"tools with no rule in the shipped Soul: {missing}"
