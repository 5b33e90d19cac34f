"""remember, recall and forget: the memory tools the model may call, governed like the rest.

A fact the model wants to keep is judged by where its text came from: the model's own words,
or the output of a tool it ran this turn (a file, a web page). The latter is data, never the
owner's word, so it waits in quarantine for the owner's Approve.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from core.agent.tools import AgentTool
from core.llm.types import ToolSpec
from core.memory.model import Provenance
from core.memory.provider import FORGET, RECALL, REMEMBER
from core.tools.action import ToolAction

_WORD = re.compile(r"\w{4,}")
SHARED = 0.6  # share of a fact's words found in one tool output that makes it the tool's


def _closed(properties: dict[str, Any], required: tuple[str, ...]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(required),
        "additionalProperties": False,
    }


def memory_tools() -> list[AgentTool]:
    """The three memory tools."""
    text = {"type": "string", "minLength": 1, "maxLength": 2000}
    return [
        AgentTool(
            ToolSpec(
                "remember",
                "Keep a fact for later conversations (the owner's preferences, names, "
                "decisions). Never a secret. A fact taken from a file or a web page waits "
                "for the owner's approval.",
                _closed({"text": text}, ("text",)),
            ),
            REMEMBER,
            lambda args: ToolAction(REMEMBER, None, {"text": str(args["text"])}),
        ),
        AgentTool(
            ToolSpec(
                "recall",
                "Search what was remembered, by words.",
                _closed({"query": text}, ("query",)),
            ),
            RECALL,
            lambda args: ToolAction(RECALL, None, {"query": str(args["query"])}),
        ),
        AgentTool(
            ToolSpec(
                "forget",
                "Forget one remembered fact, by the id recall gave (the owner can undo it).",
                _closed({"id": {"type": "string", "minLength": 1, "maxLength": 64}}, ("id",)),
            ),
            FORGET,
            lambda args: ToolAction(FORGET, None, {"id": str(args["id"])}),
        ),
    ]


def with_provenance(action: ToolAction, tool_outputs: Iterable[str]) -> ToolAction:
    """A remember action marked with where its text came from: TOOL when most of its words
    stand in one output a tool gave this turn (the model is passing data on), else AGENT."""
    if action.capability != REMEMBER:
        return action
    text = str(action.params.get("text", ""))
    words = {w.lower() for w in _WORD.findall(text)}
    provenance = Provenance.AGENT
    for output in tool_outputs:
        seen = {w.lower() for w in _WORD.findall(output)}
        flat = " ".join(output.split()).lower()
        if " ".join(text.split()).lower() in flat or (
            words and len(words & seen) >= SHARED * len(words)
        ):
            provenance = Provenance.TOOL
            break
    return ToolAction(action.capability, None, {**action.params, "provenance": str(provenance)})
