"""propose_job: the model proposes a reminder or a repeating job; the owner creates it
with one tap on the card it sends (core/scheduler/provider.py)."""

from __future__ import annotations

from core.agent.tools import AgentTool
from core.llm.types import ToolSpec
from core.scheduler.provider import PROPOSE
from core.tools.action import ToolAction


def propose_job_tool() -> AgentTool:
    """The propose_job tool."""
    text = {"type": "string", "minLength": 1, "maxLength": 500}
    spec = ToolSpec(
        "propose_job",
        "Propose a reminder or a repeating job when the owner asks for one ('remind me at 9 "
        "to call Anna', 'every Monday at 8 summarise the logs'). The owner gets a card with "
        "Create / Cancel, or is asked which time was meant; nothing exists until Create. "
        "Pass the owner's own words for the time; never guess am or pm.",
        {
            "type": "object",
            "properties": {
                "when": {
                    **text,
                    "description": "The time as the owner said it: 'in 2 minutes', 'at 9', "
                    "'tomorrow at 9:30am', 'every Monday at 8'.",
                },
                "what": {**text, "description": "What to remind of or do, e.g. 'call Anna'."},
                "kind": {
                    "type": "string",
                    "enum": ["reminder", "task"],
                    "description": "reminder (default): the owner gets a card saying `what`. "
                    "task: at each time you are given `what` as the owner's request and do it "
                    "(each run waits for the owner's Approve).",
                },
            },
            "required": ["when", "what"],
            "additionalProperties": False,
        },
    )
    return AgentTool(
        spec,
        PROPOSE,
        lambda args: ToolAction(
            PROPOSE,
            None,
            {
                "when": str(args["when"]),
                "what": str(args["what"]),
                "kind": str(args.get("kind", "reminder")),
            },
        ),
    )
