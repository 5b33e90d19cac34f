"""Many tools, few tokens: past `mcp.offer_all_up_to` MCP tools the model is offered
find_tools instead of their schemas, and a search finds the ones a request needs."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.agent.catalog import built_in_tools
from core.agent.tool_search import (
    FIND,
    FIND_TOOLS,
    ToolFinder,
    ToolIndex,
    find_tools_definition,
    words,
)
from core.agent.tools import ToolTable, estimated_tokens
from core.errors import PolicyDenied
from core.tools.action import ToolAction
from core.tools.capability import CapabilityTokens
from core.tools.definition import ToolSetup
from core.tools.tool_registry import ToolRegistry
from tests.core.agent.many_tools import many_tools
from tests.core.agent.test_tool_definitions import everything_on

BUDGET = 4000  # issue 33: with 500 tools registered, the tool part of a prompt


def registry_with(count: int) -> ToolRegistry:
    """The built-in tools, find_tools and `count` MCP tools."""
    registry = built_in_tools()
    registry.add(find_tools_definition(registry))
    for definition in many_tools(count):
        registry.add(definition)
    return registry


def names(table: ToolTable, found: tuple[str, ...] = ()) -> set[str]:
    return {spec.name for spec in table.specs(found)}


def test_500_tools_cost_a_prompt_under_4000_tokens(tmp_path: Path) -> None:
    table = ToolTable.offered(registry_with(500), everything_on(tmp_path))
    offered = table.specs()
    assert estimated_tokens(offered) <= BUDGET, estimated_tokens(offered)
    assert FIND_TOOLS in names(table)
    assert not {name for name in names(table) if name.startswith("mcp__")}
    assert "run_command" in names(table)  # the built-in tools stay


def test_what_a_search_found_is_offered_and_nothing_else(tmp_path: Path) -> None:
    table = ToolTable.offered(registry_with(500), everything_on(tmp_path))
    found = ("mcp__mail__get_history_2", "mcp__calendar__create_comment_13")
    mcp = {name for name in names(table, found) if name.startswith("mcp__")}
    assert mcp == set(found)


def test_up_to_the_limit_every_tool_is_offered_and_no_search(tmp_path: Path) -> None:
    table = ToolTable.offered(registry_with(20), everything_on(tmp_path))
    offered = names(table)
    assert len({name for name in offered if name.startswith("mcp__")}) == 20
    assert FIND_TOOLS not in offered


def test_the_limit_is_a_setting(tmp_path: Path) -> None:
    setup = everything_on(tmp_path)
    settings = setup.settings.model_copy(
        update={"mcp": setup.settings.mcp.model_copy(update={"offer_all_up_to": 5})}
    )
    table = ToolTable.offered(registry_with(6), type(setup)(settings, setup.workspace))
    assert FIND_TOOLS in names(table)
    assert not {name for name in names(table) if name.startswith("mcp__")}


def test_a_search_ranks_the_tool_that_fits_first(tmp_path: Path) -> None:
    setup = everything_on(tmp_path)
    registry = registry_with(500)
    found = ToolIndex(registry).search(setup, "delete a label from my calendar", 5)
    assert found[0].startswith("mcp__calendar__delete_label_")
    assert ToolIndex(registry).search(setup, "zebra xylophone", 5) == []


def test_a_search_finds_only_on_demand_tools(tmp_path: Path) -> None:
    found = ToolIndex(registry_with(500)).search(
        everything_on(tmp_path), "search the web or read a file", 20
    )
    assert found
    assert all(name.startswith("mcp__") for name in found)


def test_the_action_carries_what_was_found_within_the_limit(tmp_path: Path) -> None:
    setup = everything_on(tmp_path)
    registry = registry_with(500)
    definition = registry.get(FIND_TOOLS)
    assert definition is not None
    action = definition.action(setup, {"query": "mail history", "limit": 3})
    assert action.capability == FIND
    assert action.params["found"] == ToolIndex(registry).search(setup, "mail history", 3)
    assert len(action.params["found"]) == 3


def test_words_split_names_as_people_read_them() -> None:
    assert words("getCurrentTime of git_log-entries") == [
        "get",
        "current",
        "time",
        "git",
        "log",
        "entries",
    ]


async def test_the_finder_lists_what_was_found_in_the_servers_words(tmp_path: Path) -> None:
    setup = everything_on(tmp_path)
    registry = registry_with(500)
    capabilities = CapabilityTokens(b"k" * 32)
    finder = ToolFinder(registry, setup.settings, capabilities)
    action = registry_action(registry, setup, "calendar label")
    result = await finder.run(action, capabilities.issue(action.digest))
    listed = [line for line in result.output.splitlines() if line.startswith("- ")]
    assert [line.split(":")[0][2:] for line in listed] == action.params["found"]
    assert "MCP server calendar" in listed[0]


async def test_a_tool_withdrawn_since_the_search_is_not_listed(tmp_path: Path) -> None:
    setup = everything_on(tmp_path)
    registry = registry_with(500)
    capabilities = CapabilityTokens(b"k" * 32)
    action = registry_action(registry, setup, "calendar label")
    gone = action.params["found"][0]
    registry.remove(gone)  # its server went away, or the owner turned it off
    result = await ToolFinder(registry, setup.settings, capabilities).run(
        action, capabilities.issue(action.digest)
    )
    assert gone not in result.output
    assert action.params["found"][1] in result.output


async def test_the_finder_runs_nothing_without_governance(tmp_path: Path) -> None:
    setup = everything_on(tmp_path)
    registry = registry_with(500)
    capabilities = CapabilityTokens(b"k" * 32)
    action = registry_action(registry, setup, "calendar label")
    other = registry_action(registry, setup, "mail history")
    finder = ToolFinder(registry, setup.settings, capabilities)
    with pytest.raises(PolicyDenied):
        await finder.run(action, capabilities.issue(other.digest))


def registry_action(registry: ToolRegistry, setup: ToolSetup, query: str) -> ToolAction:
    """The action a find_tools call with `query` becomes."""
    definition = registry.get(FIND_TOOLS)
    assert definition is not None
    return definition.action(setup, {"query": query})
