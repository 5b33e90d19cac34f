"""What the owner wants: a plan, an action, both, knowledge, or just conversation."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol, runtime_checkable

from core.errors import ProviderUnavailable
from core.features import FeatureFlags
from core.llm.types import CompletionRequest, Lane, Message, ModelRouter, Role


class Intent(StrEnum):
    """The five kinds of request the agent tells apart."""

    PLAN_REQUEST = "PLAN_REQUEST"
    EXEC_REQUEST = "EXEC_REQUEST"
    MIXED_REQUEST = "MIXED_REQUEST"
    KNOWLEDGE_REQUEST = "KNOWLEDGE_REQUEST"
    CONVERSATIONAL = "CONVERSATIONAL"

    @property
    def needs_plan(self) -> bool:
        """Planned first (a PlanArtifact), then executed step by step."""
        return self in (Intent.PLAN_REQUEST, Intent.MIXED_REQUEST)


INTENT_SCHEMA: dict[str, object] = {
    "type": "object",
    "properties": {"intent": {"type": "string", "enum": [i.value for i in Intent]}},
    "required": ["intent"],
    "additionalProperties": False,
}

_PLAN = re.compile(
    r"\b(plan|planning|strategy|roadmap|design|approach|steps to|step by step|outline|"
    r"how should i|how would you|migrate|refactor|set up|organi[sz]e)\b",
    re.IGNORECASE,
)
_EXEC = re.compile(
    r"\b(run|execute|delete|remove|rm|create|make|write|save|move|rename|copy|list|show|"
    r"find|search|grep|install|clean ?up|touch|mkdir|cat|ls|open|read|count|do it)\b",
    re.IGNORECASE,
)
_CHAT = re.compile(
    r"^\s*(hi|hello|hey|thanks|thank you|good (morning|evening|night|afternoon)|ok|okay|"
    r"cool|great|bye|see you)\b[\s!.]*$",
    re.IGNORECASE,
)
_QUESTION = re.compile(
    r"(\?\s*$)|^\s*(what|why|who|when|where|which|how|explain|tell me|define|is|are|can|does)\b",
    re.IGNORECASE,
)


def classify_by_keywords(text: str) -> Intent:
    """The heuristic fallback: cheap, deterministic, always available."""
    if _CHAT.match(text):
        return Intent.CONVERSATIONAL
    plan, act = bool(_PLAN.search(text)), bool(_EXEC.search(text))
    if plan and act:
        return Intent.MIXED_REQUEST
    if plan:
        return Intent.PLAN_REQUEST
    question = bool(_QUESTION.search(text.strip()))
    if act and (not question or _imperative(text)):
        return Intent.EXEC_REQUEST
    if question or act:
        return Intent.KNOWLEDGE_REQUEST
    return Intent.CONVERSATIONAL if len(text.split()) <= 4 else Intent.KNOWLEDGE_REQUEST


def _imperative(text: str) -> bool:
    """'can you delete x' and 'please list y' are requests to act, not questions."""
    return bool(re.match(r"^\s*(can|could|would|will) you\b|^\s*please\b", text, re.IGNORECASE))


@runtime_checkable
class LocalAware(Protocol):
    """A router that can say whether a local model is configured (optional)."""

    def has_local(self) -> bool:
        """Whether the local lanes have a model."""
        ...


@dataclass(frozen=True, slots=True)
class Classification:
    """The intent and who decided it (keywords, local or flagship)."""

    intent: Intent
    source: str


class IntentClassifier:
    """Flagship (FEATURE_UNIFIED_CLASSIFICATION), else the local lane, else keywords."""

    def __init__(self, router: ModelRouter, features: FeatureFlags) -> None:
        self._router = router
        self._features = features

    async def classify(self, text: str, *, parent_id: str, quest_id: str) -> Classification:
        """Classify one request; a model failure falls back to keywords, never an error."""
        lanes: list[tuple[Lane, str]] = []
        if self._features.enabled("UNIFIED_CLASSIFICATION") and self._router.has_flagship():
            lanes.append((Lane.FLAGSHIP_FAST, "flagship"))
        if not isinstance(self._router, LocalAware) or self._router.has_local():
            lanes.append((Lane.LOCAL_UTILITY, "local"))
        for lane, source in lanes:
            intent = await self._ask(lane, text, parent_id, quest_id)
            if intent is not None:
                return Classification(intent, source)
        return Classification(classify_by_keywords(text), "keywords")

    async def _ask(self, lane: Lane, text: str, parent_id: str, quest_id: str) -> Intent | None:
        request = CompletionRequest(
            messages=(
                Message(Role.SYSTEM, _PROMPT),
                Message(Role.USER, text[:2000]),
            ),
            temperature=0.0,
            max_tokens=32,
            json_schema=INTENT_SCHEMA,
        )
        try:
            answer = await self._router.complete(
                request, task_type="intent", lane=lane, parent_id=parent_id, quest_id=quest_id
            )
            value = json.loads(answer.text).get("intent")
            return Intent(value)
        except (ProviderUnavailable, ValueError, AttributeError):
            return None


_PROMPT = (
    "Classify the owner's message into exactly one intent. PLAN_REQUEST: wants a plan or "
    "approach, not action yet. EXEC_REQUEST: wants something done now (files, commands). "
    "MIXED_REQUEST: a multi-step job to plan and then carry out. KNOWLEDGE_REQUEST: a "
    "question to answer. CONVERSATIONAL: greetings, thanks, small talk. "
    'Answer as JSON: {"intent": "..."}.'
)
