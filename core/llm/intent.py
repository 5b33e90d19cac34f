"""Intent classification on the local lane (grammar-constrained label), with a keyword fallback."""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from enum import StrEnum

from core.errors import ProviderUnavailable
from core.llm.types import CompletionRequest, Lane, Message, ModelRouter, Role

log = logging.getLogger(__name__)


class Intent(StrEnum):
    """What the owner's free text asks for."""

    PLAN_REQUEST = "PLAN_REQUEST"
    EXEC_REQUEST = "EXEC_REQUEST"
    MIXED_REQUEST = "MIXED_REQUEST"
    KNOWLEDGE_REQUEST = "KNOWLEDGE_REQUEST"
    CONVERSATIONAL = "CONVERSATIONAL"


# The model may only write one of the labels, as a JSON string (a grammar enforces it).
INTENT_SCHEMA: dict[str, object] = {"enum": [i.value for i in Intent]}
# Flagship structured output wants an object at the top.
INTENT_OBJECT_SCHEMA: dict[str, object] = {
    "type": "object",
    "properties": {"intent": INTENT_SCHEMA},
    "required": ["intent"],
    "additionalProperties": False,
}

# Instructions a capable model follows; the examples carry a small base model.
SYSTEM_PROMPT = (
    "Classify the owner's message for a personal agent. Answer with exactly one label:\n"
    "PLAN_REQUEST: wants a plan, design or strategy, not action yet.\n"
    "EXEC_REQUEST: wants something done now (run, create, change, send, delete).\n"
    "MIXED_REQUEST: wants a plan and then the work done.\n"
    "KNOWLEDGE_REQUEST: asks a question or an explanation.\n"
    "CONVERSATIONAL: greetings, thanks, small talk."
)
EXAMPLES = (
    ("Plan how we should migrate the notes to a new folder layout", Intent.PLAN_REQUEST),
    ("Create a file todo.txt with three items", Intent.EXEC_REQUEST),
    ("Work out a backup strategy and then set it up", Intent.MIXED_REQUEST),
    ("What is the difference between TCP and UDP?", Intent.KNOWLEDGE_REQUEST),
    ("Hi there, thanks for the help!", Intent.CONVERSATIONAL),
    ("Delete the old logs in the workspace", Intent.EXEC_REQUEST),
    ("Why does my script fail with a permission error?", Intent.KNOWLEDGE_REQUEST),
)


@dataclass(frozen=True, slots=True)
class IntentResult:
    """A label and where it came from: "local", a flagship lane's name, or "heuristic"."""

    intent: Intent
    source: str


def intent_request(text: str, schema: dict[str, object] = INTENT_SCHEMA) -> CompletionRequest:
    """The constrained request: instructions, labelled examples, then the message."""
    shots = "\n".join(f"Message: {q}\nLabel: {label.value}" for q, label in EXAMPLES)
    user = f"{shots}\nMessage: {_one_line(text)}\nLabel:"
    return CompletionRequest(
        messages=(Message(Role.SYSTEM, SYSTEM_PROMPT), Message(Role.USER, user)),
        temperature=0.0,
        max_tokens=12,
        json_schema=schema,
    )


async def classify_intent(
    text: str,
    router: ModelRouter | None,
    *,
    parent_id: str | None = None,
    quest_id: str | None = None,
    lane: Lane = Lane.LOCAL_UTILITY,
) -> IntentResult:
    """The model's label for `text` (local by default; a flagship lane for unified
    classification); the keyword heuristic when it cannot answer."""
    if router is not None:
        local = lane in (Lane.LOCAL_UTILITY, Lane.LOCAL_REDACTION)
        try:
            completion = await router.complete(
                intent_request(text, INTENT_SCHEMA if local else INTENT_OBJECT_SCHEMA),
                task_type="intent_classification",
                lane=Lane.LOCAL_UTILITY if local else lane,
                parent_id=parent_id,
                quest_id=quest_id,
            )
            return IntentResult(parse_label(completion.text), "local" if local else lane.value)
        except (ProviderUnavailable, ValueError) as exc:
            log.info("intent falls back to keywords: %s", exc)
    return IntentResult(heuristic_intent(text), "heuristic")


def parse_label(text: str) -> Intent:
    """The label in a constrained answer ('"EXEC_REQUEST"'); ValueError if there is none."""
    try:
        value = json.loads(text)
    except ValueError:
        value = text.strip().strip('"')
    if isinstance(value, dict):
        value = value.get("intent", "")
    return Intent(str(value).strip())


_GREETING = re.compile(
    r"(?i)^\W*(?:hi|hello|hey|yo|thanks|thank you|cheers|good (?:morning|evening|night|afternoon)"
    r"|how are you|bye|ok(?:ay)?|great|nice|cool)\b"
)
_PLAN = re.compile(
    r"(?i)\b(?:plan|planning|strategy|roadmap|design|propose|proposal|outline|approach|"
    r"how (?:should|would|could) (?:i|we)|steps? to|think through|work out)\b"
)
_EXEC = re.compile(
    r"(?i)^\W*(?:please\s+)?(?:run|create|make|write|delete|remove|rm|move|mv|copy|cp|rename|"
    r"install|deploy|build|send|fix|update|add|list|ls|show|open|start|stop|restart|set|"
    r"change|edit|clean|archive|download|upload|commit|push|generate|execute|touch|mkdir)\b"
)
_THEN_DO = re.compile(r"(?i)\b(?:and then|then|and)\s+(?:do|run|set|implement|execute|apply|make)")
_QUESTION = re.compile(
    r"(?i)^\W*(?:what|why|how|when|where|who|which|is|are|can|could|does|do|explain|tell me|"
    r"describe|define)\b"
)


def heuristic_intent(text: str) -> Intent:
    """Keyword rules, for when no model answers."""
    stripped = text.strip()
    plan = bool(_PLAN.search(stripped))
    execute = bool(_EXEC.search(stripped)) or bool(_THEN_DO.search(stripped))
    if plan and execute:
        return Intent.MIXED_REQUEST
    if plan:
        return Intent.PLAN_REQUEST
    if execute:
        return Intent.EXEC_REQUEST
    if _GREETING.search(stripped) and len(stripped) < 60:
        return Intent.CONVERSATIONAL
    if _QUESTION.search(stripped) or stripped.endswith("?"):
        return Intent.KNOWLEDGE_REQUEST
    return Intent.CONVERSATIONAL if len(stripped) < 20 else Intent.KNOWLEDGE_REQUEST


def _one_line(text: str) -> str:
    """The message on one line, bounded: the label depends on its gist, not its length."""
    return " ".join(text.split())[:400]
