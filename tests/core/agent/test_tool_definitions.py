"""Every tool the model can be offered is defined once, with a flow (what its output carries,
what it sends or changes) and a tier: a tool defined without either, or whose flow names a
parameter it does not have, fails here, before a fooled model can use it unjudged."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from core.agent.catalog import BUILT_IN, built_in_tools
from core.agent.tools import ToolTable
from core.config import load_settings
from core.tools.definition import (
    UNKNOWN,
    ToolDefinition,
    ToolFlow,
    ToolSetup,
    definition_problems,
)
from core.tools.tool_registry import ToolRegistry
from core.tools.workspace import Workspace
from soul import SHIPPED_VERSIONS_DIR, SoulStore


def everything_on(tmp_path: Path) -> ToolSetup:
    """Governance, memory, fetch and search all switched on."""
    settings = load_settings(
        environ={
            "LANCELOT_HOME": str(tmp_path),
            "LANCELOT_LOOKUPS_FETCH_ALLOWLIST": "*",
            "LANCELOT_LOOKUPS_SEARCH_PROVIDER": "searxng",
            "LANCELOT_LOOKUPS_SEARCH_URL": "http://127.0.0.1:9/",
        }
    )
    return ToolSetup(settings, Workspace(tmp_path / "workspace"))


def test_everything_is_offered_when_switched_on(tmp_path: Path) -> None:
    names = set(ToolTable.offered(built_in_tools(), everything_on(tmp_path)).capabilities())
    assert {"web_fetch", "web_search", "remember", "forget", "propose_job"} <= names


def test_what_is_not_set_up_is_not_offered(tmp_path: Path) -> None:
    settings = load_settings(environ={"LANCELOT_HOME": str(tmp_path)})
    setup = ToolSetup(settings, Workspace(tmp_path), governed=False, remembers=False)
    names = set(ToolTable.offered(built_in_tools(), setup).capabilities())
    assert "run_command" in names
    assert not names & {"web_fetch", "web_search", "remember", "propose_job"}


def test_every_offered_tool_has_a_flow_and_a_tier(tmp_path: Path) -> None:
    registry = built_in_tools()
    for definition in registry.offered(everything_on(tmp_path)):
        assert definition_problems(definition) == [], definition.name
        assert registry.flow_of(definition.capability) is definition.flow
        assert registry.tier_of(definition.capability) == definition.tier


def test_the_souls_rules_and_the_definitions_agree_on_the_base_tier(tmp_path: Path) -> None:
    """Where the shipped Soul rules a capability with one unconditional rule, the
    definition's tier says the same (the Soul may still raise or lower it by amendment)."""
    soul = SoulStore(SHIPPED_VERSIONS_DIR, tmp_path / "soul").load_active()
    for definition in BUILT_IN:
        rules = [r for r in soul.risk_rules.rules if r.capability == definition.capability]
        if len(rules) == 1 and rules[0].match is None:
            assert rules[0].tier == definition.tier, definition.name


def _read_file(**changes: Any) -> ToolDefinition:
    registry = built_in_tools()
    found = registry.get("read_file")
    assert found is not None
    return replace(found, **changes)


def test_a_definition_without_a_flow_is_refused() -> None:
    with pytest.raises(ValueError, match="declares no flow"):
        _read_file(flow=None)


def test_a_definition_with_no_tier_is_refused() -> None:
    with pytest.raises(ValueError, match="tier 'T9'"):
        _read_file(tier="T9")


def test_a_flow_naming_a_parameter_the_schema_lacks_is_refused() -> None:
    with pytest.raises(ValueError, match="names url, which its schema does not have"):
        _read_file(flow=ToolFlow(frozenset(), sends=("url",)))


def test_a_bad_name_or_schema_is_refused() -> None:
    with pytest.raises(ValueError, match="a name is 1 to 64"):
        _read_file(name="read file")
    with pytest.raises(ValueError, match="no JSON schema"):
        _read_file(parameters={"type": "objekt"})


def test_a_name_or_capability_is_defined_once() -> None:
    registry = ToolRegistry(BUILT_IN)
    with pytest.raises(ValueError, match="already defined"):
        registry.add(_read_file(capability="file.read2"))
    with pytest.raises(ValueError, match="already 'read_file'"):
        registry.add(_read_file(name="read_file2"))


def test_a_capability_nothing_defines_is_judged_as_the_cautious_unknown() -> None:
    registry = built_in_tools()
    assert registry.flow_of("skill.whatever") is UNKNOWN
    assert registry.tier_of("skill.whatever") is None
