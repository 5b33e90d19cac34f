"""remember, recall and forget: the memory tools the model may call, governed like the rest.

A fact the model wants to keep is judged by what the request has read (core/agent/
flow_checks.py): after a stranger's text, it waits in quarantine for the owner's Approve
unless its words are the owner's.
"""

from __future__ import annotations

from typing import Any

from core.agent.tools import AgentTool
from core.llm.types import ToolSpec
from core.memory.provider import FORGET, RECALL, REMEMBER
from core.tools.action import ToolAction


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
