"""The structured final answer the model must give, and how its JSON is read."""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, Field, ValidationError


class ActionClaim(BaseModel):
    """One thing the model says it did: the tool and the exact command or target."""

    tool: str
    detail: str = Field(description="the exact command line or target the tool acted on")


class FinalAnswer(BaseModel):
    """What the owner is told, what was done, and what comes next."""

    response_to_user: str
    actions_taken: list[ActionClaim] = Field(default_factory=list)
    next_action: str = ""


FINAL_SCHEMA: dict[str, Any] = FinalAnswer.model_json_schema()

FINAL_INSTRUCTIONS = (
    "When you are done, reply with JSON only: "
    '{"response_to_user": "...", "actions_taken": [{"tool": "...", "detail": "<exact '
    'command>"}], "next_action": "..."}. List in actions_taken only tool calls that ran '
    "and succeeded in this conversation; never describe an action you did not take."
)

_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.IGNORECASE)


def parse_json_object(text: str) -> dict[str, Any]:
    """A JSON object from model text (plain or in a fenced block); ValueError if none."""
    data = json.loads(_FENCE.sub("", text.strip()))
    if not isinstance(data, dict):
        raise ValueError("expected a JSON object")
    return data


def parse_final(text: str) -> FinalAnswer | None:
    """The answer in `text`, or None if it is not one."""
    try:
        return FinalAnswer.model_validate(parse_json_object(text))
    except (ValidationError, ValueError):
        return None
