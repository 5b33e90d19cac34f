"""A server tool's names, tier and flow: from its annotations, before the Soul has its say,
and the Soul's `risk_rules.mcp` over them."""

from __future__ import annotations

import pytest

from core.agent.mcp_tools import mcp_definition
from core.mcp import ServerState, ToolHints, ToolInfo
from core.mcp.naming import (
    annotated_tier,
    governing_tier,
    plain_call,
    soul_tier,
    split_capability,
)
from core.tools.definition import ANY_TARGET, Label
from soul.schema import Tier

SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}, "text": {}}}


def tool(**hints: bool) -> ToolInfo:
    return ToolInfo("write", "Writes a note.", SCHEMA, ToolHints(**hints))


def state(transport: str = "stdio") -> ServerState:
    return ServerState("notes", transport, "ready")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("hints", "tier"),
    [
        ({"read_only": True, "open_world": False}, "T0"),
        ({"read_only": True, "open_world": True}, "T1"),
        ({"read_only": False, "destructive": False}, "T2"),
        ({"read_only": False, "destructive": True}, "T3"),
        ({"read_only": False}, "T3"),  # destructive unsaid: the spec's default, true
        ({}, "T3"),  # no annotations at all: counted as destructive
    ],
)
def test_the_annotations_give_the_tier(hints: dict[str, bool], tier: str) -> None:
    assert annotated_tier(ToolHints(**hints)) == tier


def test_the_souls_entry_for_a_tool_beats_its_servers_wildcard() -> None:
    rules = {"git": {"git_log": "T0", "*": "T2"}}
    assert soul_tier(rules, "git", "git_log") == "T0"
    assert soul_tier(rules, "git", "git_reset") == "T2"
    assert soul_tier(rules, "time", "now") is None


def test_a_capability_splits_back_into_server_and_tool() -> None:
    definition = mcp_definition(state(), tool(read_only=True, open_world=False))
    assert (definition.name, definition.capability) == ("mcp__notes__write", "mcp.notes.write")
    assert split_capability(definition.capability) == ("notes", "write")
    assert split_capability("web.fetch") is None
    assert split_capability("mcp.notes") is None


def test_a_read_only_closed_tool_reads_strangers_text_and_sends_and_changes_nothing() -> None:
    flow = mcp_definition(state(), tool(read_only=True, open_world=False)).flow
    assert flow.reads == frozenset({Label.STRANGER})
    assert (flow.sends, flow.changes) == ((), ())


def test_an_http_servers_arguments_leave_the_machine() -> None:
    flow = mcp_definition(state("http"), tool(read_only=True, open_world=False)).flow
    assert flow.sends == ("path", "text")


def test_an_open_world_tools_arguments_leave_the_machine() -> None:
    flow = mcp_definition(state(), tool(read_only=True, open_world=True)).flow
    assert flow.sends == ("path", "text")


def test_a_tool_that_is_not_read_only_changes_what_its_arguments_name() -> None:
    flow = mcp_definition(state(), tool(read_only=False, open_world=False)).flow
    assert flow.changes == ("path", "text")
    bare = ToolInfo("wipe", "", {"type": "object"}, ToolHints(read_only=False))
    assert mcp_definition(state(), bare).flow.changes == (ANY_TARGET,)


def test_a_tool_whose_schema_is_broken_is_refused_in_one_line() -> None:
    broken = ToolInfo("odd", "", {"type": "object", "properties": 3}, ToolHints())
    with pytest.raises(ValueError, match="its parameters are no JSON schema"):
        mcp_definition(state(), broken)


def test_a_card_says_which_server_does_what_with_which_arguments() -> None:
    said = plain_call("git", "git_commit", {"message": "x" * 500, "amend": False})
    assert said.startswith("MCP server git runs its tool git_commit with:\nmessage = xxx")
    assert len(said.split("\n")[1]) == len("message = ") + 200
    assert said.endswith("amend = false")
    assert plain_call("time", "now", {}) == "MCP server time runs its tool now, with no arguments"


@pytest.mark.parametrize(
    ("soul", "chosen", "annotated", "tier"),
    [
        (None, None, "T3", "T3"),  # the annotations alone
        ("T1", None, "T3", "T1"),  # the Soul over them, lower too
        (None, "T1", "T3", "T1"),  # the owner over them, lower too
        (None, "T2", "T0", "T2"),  # the owner raises
        ("T2", "T1", "T3", "T2"),  # never below the Soul's entry
        ("T1", "T3", "T0", "T3"),  # above it, always
    ],
)
def test_the_owners_tier_acts_like_the_souls_but_never_below_it(
    soul: Tier | None, chosen: Tier | None, annotated: Tier, tier: Tier
) -> None:
    assert governing_tier(soul, chosen, annotated) == tier
