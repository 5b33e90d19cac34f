"""The PlanArtifact a complex request gets first, and the card that shows it to the owner."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from core.events import Button, Card, CardKind

MAX_STEPS = 8


class PlanArtifact(BaseModel):
    """What the model intends to do, before it does any of it."""

    goal: str
    context: str = ""
    assumptions: list[str] = Field(default_factory=list)
    plan_steps: list[str] = Field(min_length=1, max_length=MAX_STEPS)
    decision_points: list[str] = Field(default_factory=list)
    risks: list[str] = Field(default_factory=list)
    done_when: str
    next_action: str = ""


PLAN_SCHEMA: dict[str, Any] = PlanArtifact.model_json_schema()

PLAN_INSTRUCTIONS = (
    "Before doing anything, write a plan as JSON with: goal, context, assumptions (list), "
    f"plan_steps (1 to {MAX_STEPS} short imperative steps, each one tool-sized), "
    "decision_points (list), risks (list), done_when (how we know it is finished), "
    "next_action. Steps that delete or overwrite will wait for the owner's approval."
)


def _bullets(items: list[str]) -> str:
    return "\n".join(f"- {item}" for item in items)


def plan_card(plan: PlanArtifact, *, will_execute: bool, buttons: tuple[Button, ...] = ()) -> Card:
    """The plan as the owner reads it on a phone."""
    steps = "\n".join(f"{n}. {step}" for n, step in enumerate(plan.plan_steps, 1))
    parts = [plan.goal, f"Steps:\n{steps}"]
    if plan.assumptions:
        parts.append(f"Assumptions:\n{_bullets(plan.assumptions)}")
    if plan.decision_points:
        parts.append(f"Decisions:\n{_bullets(plan.decision_points)}")
    if plan.risks:
        parts.append(f"Risks:\n{_bullets(plan.risks)}")
    fields = [("Done when", plan.done_when)]
    if will_execute:
        fields.append(("Now", "carrying it out; anything irreversible asks you first"))
    elif plan.next_action:
        fields.append(("Next", plan.next_action))
    body = "\n\n".join(parts)
    return Card(CardKind.NOTICE, "Plan", body, fields=tuple(fields), buttons=buttons)
