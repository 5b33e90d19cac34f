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


# The local model answers with a short word for the kind (one token each for Gemma, plain
# words for any model), constrained to this JSON enum; the words map onto the labels.
KINDS: dict[str, Intent] = {
    "plan": Intent.PLAN_REQUEST,
    "action": Intent.EXEC_REQUEST,
    "both": Intent.MIXED_REQUEST,
    "question": Intent.KNOWLEDGE_REQUEST,
    "chat": Intent.CONVERSATIONAL,
}
LOCAL_SCHEMA: dict[str, object] = {"enum": list(KINDS)}
# A flagship's structured output names the labels themselves, in an object.
FLAGSHIP_SCHEMA: dict[str, object] = {
    "type": "object",
    "properties": {"intent": {"type": "string", "enum": [i.value for i in Intent]}},
    "required": ["intent"],
    "additionalProperties": False,
}

# Instructions a capable model follows; the examples are what carry a small base model.
INSTRUCTIONS = (
    "Sort each message from the owner of a personal assistant into one kind: "
    "plan (wants a plan, design or strategy, not action yet), "
    "action (wants something done now: run, create, change, send, delete), "
    "both (wants a plan and then the work done), "
    "question (asks for knowledge or an explanation), "
    "chat (greetings, thanks, small talk). Answer with the kind only."
)
EXAMPLES: tuple[tuple[str, str], ...] = (
    ("Plan how we should migrate the notes to a new folder layout", "plan"),
    ("Create a file todo.txt with three items", "action"),
    ("Work out a backup strategy and then set it up", "both"),
    ("What is the difference between TCP and UDP?", "question"),
    ("Hi there, thanks for the help!", "chat"),
    ("Delete the old logs in the workspace", "action"),
    ("Why does my script fail with a permission error?", "question"),
    ("Outline a roadmap for the website redesign", "plan"),
    ("Good evening, how is it going?", "chat"),
    ("Propose an approach for the data cleanup, then carry it out", "both"),
    ("Copy config.yaml to backup/", "action"),
    ("Who wrote The Hobbit?", "question"),
    ("Thanks, that's perfect", "chat"),
    ("How should we structure the new project? Give me the steps", "plan"),
    ("Send the weekly report to the team", "action"),
    ("Explain how garbage collection works", "question"),
    ("Research the options and then install the best one", "both"),
    ("Hey!", "chat"),
    ("List the files in the workspace", "action"),
    ("What does this error mean?", "question"),
)


@dataclass(frozen=True, slots=True)
class IntentResult:
    """A label and where it came from: "local", a flagship lane's name, or "heuristic"."""

    intent: Intent
    source: str


def _line(message: str, kind: str | None = None) -> str:
    """One example as compact JSON; without a kind it stops where the answer goes."""
    head = json.dumps({"message": message}, ensure_ascii=False, separators=(",", ":"))[:-1]
    return f'{head},"kind":' + (f'"{kind}"}}' if kind is not None else "")


def intent_request(text: str, *, local: bool = True) -> CompletionRequest:
    """The constrained request: instructions, labelled examples (JSON lines), the message.

    The fixed part comes first so the local model's prompt cache covers it; only the
    message is new on each call.
    """
    shots = "\n".join(_line(q, kind) for q, kind in EXAMPLES)
    user = f"{shots}\n{_line(_one_line(text))}"
    return CompletionRequest(
        messages=(Message(Role.SYSTEM, INSTRUCTIONS), Message(Role.USER, user)),
        temperature=0.0,
        max_tokens=24,
        json_schema=LOCAL_SCHEMA if local else FLAGSHIP_SCHEMA,
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
                intent_request(text, local=local),
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
    """The label in a constrained answer ('"action"', '{"intent": "EXEC_REQUEST"}'); ValueError
    if there is none."""
    try:
        value = json.loads(text)
    except ValueError:
        value = text.strip().strip('"')
    if isinstance(value, dict):
        value = value.get("intent", "")
    word = str(value).strip()
    return KINDS.get(word.lower()) or Intent(word)


_GREETING = re.compile(
    r"(?i)^\W*(?:hi|hello|hey|yo|thanks|thank you|cheers|good (?:morning|evening|night|afternoon)"
    r"|how are you|bye|ok(?:ay)?|great|nice|cool)\b"
)
_PLAN = re.compile(
    r"(?i)\b(?:plan|planning|strategy|roadmap|design|propose|proposal|outline|approach|"
    r"how (?:should|would|could) (?:i|we)|steps? to|think through|work out)\b"
)
_VERBS = (
    r"(?:run|create|make|write|delete|remove|rm|move|mv|copy|cp|rename|install|deploy|build|"
    r"send|fix|update|add|list|ls|show|open|start|stop|restart|set|change|edit|clean|archive|"
    r"download|upload|commit|push|generate|execute|touch|mkdir|read|cat|find|search|grep|count)"
)
_EXEC = re.compile(r"(?i)^\W*(?:(?:can|could|would|will) you\s+)?(?:please\s+)?" + _VERBS + r"\b")
_THEN_DO = re.compile(r"(?i)\b(?:and then|then|and)\s+(?:do|implement|apply|" + _VERBS + r")\b")
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
