"""propose_job: the model proposes a reminder or a repeating job; the owner creates it
with one tap on the card it sends (core/scheduler/provider.py serves it)."""

from __future__ import annotations

from typing import Any

from core.agent.workspace_tools import closed
from core.scheduler.provider import PROPOSE
from core.tools.action import ToolAction
from core.tools.definition import NOTHING, ToolDefinition, ToolFlow, ToolSetup

_TEXT = {"type": "string", "minLength": 1, "maxLength": 500}


def _action(_: ToolSetup, args: dict[str, Any]) -> ToolAction:
    params = {
        "when": str(args["when"]),
        "what": str(args["what"]),
        "kind": str(args.get("kind", "reminder")),
    }
    return ToolAction(PROPOSE, None, params)


def _governed(setup: ToolSetup) -> bool:
    """The scheduler's schedule.propose provider is wired with governance."""
    return setup.governed


PROPOSE_JOB = ToolDefinition(
    name="propose_job",
    capability=PROPOSE,
    description=(
        "Propose a reminder or a repeating job when the owner asks for one ('remind me at 9 "
        "to call Anna', 'every Monday at 8 summarise the logs'). The owner gets a card with "
        "Create / Cancel, or is asked which time was meant; nothing exists until Create. "
        "Pass the owner's own words for the time; never guess am or pm."
    ),
    parameters=closed(
        {
            "when": {
                **_TEXT,
                "description": "The time as the owner said it: 'in 2 minutes', 'at 9', "
                "'tomorrow at 9:30am', 'every Monday at 8'.",
            },
            "what": {**_TEXT, "description": "What to remind of or do, e.g. 'call Anna'."},
            "kind": {
                "type": "string",
                "enum": ["reminder", "task"],
                "description": "reminder (default): the owner gets a card saying `what`. "
                "task: at each time you are given `what` as the owner's request and do it "
                "(each run waits for the owner's Approve).",
            },
        },
        ("when", "what"),
    ),
    flow=ToolFlow(NOTHING, changes=("what",)),
    tier="T2",
    enabled=_governed,
    to_action=_action,
)
DEFINITIONS = (PROPOSE_JOB,)
