"""remember, recall and forget: the memory tools the model may call, governed like the rest,
offered when memory is wired (the memory provider, core/memory/provider.py, serves them).

A fact the model wants to keep is judged by what the request has read (core/agent/
flow_checks.py): after a stranger's text, it waits in quarantine for the owner's Approve
unless its words are the owner's.
"""

from __future__ import annotations

from core.agent.workspace_tools import closed
from core.memory.provider import FORGET, RECALL, REMEMBER
from core.tools.definition import NOTHING, PRIVATE, ToolDefinition, ToolFlow, ToolSetup

_TEXT = {"type": "string", "minLength": 1, "maxLength": 2000}


def _wired(setup: ToolSetup) -> bool:
    return setup.remembers


REMEMBER_TOOL = ToolDefinition(
    name="remember",
    capability=REMEMBER,
    description=(
        "Keep a fact for later conversations (the owner's preferences, names, "
        "decisions). Never a secret. A fact taken from a file or a web page waits "
        "for the owner's approval."
    ),
    parameters=closed({"text": _TEXT}, ("text",)),
    flow=ToolFlow(NOTHING, remembers=True),
    tier="T2",
    enabled=_wired,
)
RECALL_TOOL = ToolDefinition(
    name="recall",
    capability=RECALL,
    description="Search what was remembered, by words.",
    parameters=closed({"query": _TEXT}, ("query",)),
    flow=ToolFlow(PRIVATE, targets=("query",)),
    tier="T0",
    enabled=_wired,
)
FORGET_TOOL = ToolDefinition(
    name="forget",
    capability=FORGET,
    description="Forget one remembered fact, by the id recall gave (the owner can undo it).",
    parameters=closed({"id": {"type": "string", "minLength": 1, "maxLength": 64}}, ("id",)),
    flow=ToolFlow(NOTHING, changes=("id",)),
    tier="T2",
    enabled=_wired,
)
DEFINITIONS = (REMEMBER_TOOL, RECALL_TOOL, FORGET_TOOL)
