"""Hundreds of MCP tools as servers of the ecosystem declare them (a name, a sentence or two,
an object schema with described properties, annotations), made up but shaped like the real
ones: mail, calendars, issue trackers, notes, home automation, databases."""

from __future__ import annotations

import functools

from core.agent.mcp_tools import mcp_definition
from core.mcp import ServerState, ToolHints, ToolInfo
from core.tools.definition import ToolDefinition

SERVERS = (
    "mail", "calendar", "github", "jira", "notes", "home", "postgres", "slack", "drive",
    "photos", "music", "weather", "maps", "bank", "shop", "news", "recipes", "fitness",
    "travel", "contacts", "tasks", "wiki", "backup", "printer", "router",
)  # fmt: skip
VERBS = ("list", "get", "search", "create", "update", "delete", "archive", "export")
THINGS = ("item", "folder", "label", "comment", "attachment", "share", "history", "setting")
PAIRS = tuple((verb, thing) for verb in VERBS for thing in THINGS)
PROPERTY = {"type": "string", "description": "The {name} of the {thing}, as the service names it."}


def _schema(thing: str) -> dict[str, object]:
    names = ("id", "account", "query", "limit")
    properties = {
        name: {**PROPERTY, "description": PROPERTY["description"].format(name=name, thing=thing)}
        for name in names
    }
    return {"type": "object", "properties": properties, "required": ["account"]}


def server_tools(server: str, count: int = 20) -> ServerState:
    """One server with `count` tools, each a verb on a thing of that server."""
    tools = []
    for index in range(count):
        verb, thing = PAIRS[index * 7 % len(PAIRS)]  # 7 is prime to 64: all different
        description = (
            f"{verb.capitalize()} a {server} {thing} of the account. Returns the {thing} as JSON "
            f"with its id, its title and when it last changed; fails when the account is unknown."
        )
        hints = ToolHints(read_only=verb in ("list", "get", "search", "export"))
        tools.append(ToolInfo(f"{verb}_{thing}_{index}", description, _schema(thing), hints))
    return ServerState(server, "stdio", "ready", tuple(tools))


@functools.cache
def _all_tools() -> tuple[ToolDefinition, ...]:
    """Every server's tools, made once (a definition checks its schema: 3 ms each)."""
    definitions: list[ToolDefinition] = []
    for server in SERVERS:
        state = server_tools(server)
        definitions += [mcp_definition(state, tool) for tool in state.tools]
    return tuple(definitions)


def many_tools(count: int = 500) -> tuple[ToolDefinition, ...]:
    """`count` MCP tools over the servers above (20 each, at most 500)."""
    return _all_tools()[:count]
