"""How an MCP server's tool is named to the model and to governance, and the tier its
annotations give it before the Soul has its say.

The model sees `mcp__<server>__<tool>`; receipts and the Soul's rules see the capability
`mcp.<server>.<tool>` (a server's name has no `.` and no `__`, so both split back).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from core.mcp.model import ToolHints
from soul.schema import Tier, tier_rank

PREFIX = "mcp."
WILDCARD = "*"


def tool_name(server: str, tool: str) -> str:
    """What the model calls the tool: `mcp__<server>__<tool>`."""
    return f"mcp__{server}__{tool}"


def capability(server: str, tool: str) -> str:
    """The capability receipts and the Soul name the tool by: `mcp.<server>.<tool>`."""
    return f"{PREFIX}{server}.{tool}"


def split_capability(name: str) -> tuple[str, str] | None:
    """(server, tool) of an MCP capability; None for any other capability."""
    if not name.startswith(PREFIX):
        return None
    server, dot, tool = name[len(PREFIX) :].partition(".")
    return (server, tool) if dot and server and tool else None


def annotated_tier(hints: ToolHints) -> Tier:
    """The tier a tool's hints give it. Lancelot cannot undo what a server did, so only a
    tool that says it is read-only runs unasked (T1 when it reaches the open world); one that
    changes things asks (T2), and one that destroys, or says nothing, asks at T3."""
    if hints.read_only:
        return "T1" if hints.open_world else "T0"
    if hints.destructive is False:
        return "T2"
    return "T3"


def soul_tier(rules: Mapping[str, Mapping[str, Tier]], server: str, tool: str) -> Tier | None:
    """The tier the Soul's `risk_rules.mcp` gives this tool: its own entry, else its
    server's `*`; None when the Soul says nothing about it."""
    entries = rules.get(server) or {}
    return entries.get(tool) or entries.get(WILDCARD)


def governing_tier(soul: Tier | None, chosen: Tier | None, annotated: Tier) -> Tier:
    """The tier a call of the tool is classified at: the Soul's `risk_rules.mcp` entry over
    the annotations, and the owner's choice from /mcp over both, like a Soul override of
    their own, except that it never goes below what the Soul's entry says (raising always
    goes: the Soul is the constitution, /mcp a tap)."""
    if chosen is None:
        return soul or annotated
    if soul is not None and tier_rank(chosen) < tier_rank(soul):
        return soul
    return chosen


def asks(tier: Tier) -> bool:
    """Whether a call at `tier` waits for the owner (an MCP tool at T2 or above always does:
    Lancelot cannot undo what a server does)."""
    return tier_rank(tier) >= 2


MAX_SHOWN = 200  # characters of one argument an approval card shows


def plain_call(server: str, tool: str, arguments: Mapping[str, object]) -> str:
    """A call in the owner's words: which server will do what with which arguments."""
    if not arguments:
        return f"MCP server {server} runs its tool {tool}, with no arguments"
    shown = []
    for key, value in arguments.items():
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        if len(text) > MAX_SHOWN:
            text = text[: MAX_SHOWN - 1] + "…"
        shown.append(f"{key} = {text}")
    return f"MCP server {server} runs its tool {tool} with:\n" + "\n".join(shown)
