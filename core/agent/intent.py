"""What the owner wants: a plan, an action, both, knowledge, or just conversation."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from core.errors import ProviderUnavailable
from core.features import FeatureFlags
from core.llm.intent import Intent, heuristic_intent, intent_request, parse_label
from core.llm.types import Lane, ModelRouter


def needs_plan(intent: Intent) -> bool:
    """Planned first (a PlanArtifact), then executed step by step."""
    return intent in (Intent.PLAN_REQUEST, Intent.MIXED_REQUEST)


@runtime_checkable
class LocalAware(Protocol):
    """A router that can say whether a local model is configured (optional)."""

    def has_local(self) -> bool:
        """Whether the local lanes have a model."""
        ...


@runtime_checkable
class LocalWarming(Protocol):
    """A router whose local model may still have to load (optional)."""

    def local_ready(self) -> bool:
        """Whether the local model answers now."""
        ...

    def warm_local(self) -> None:
        """Start loading it in the background."""
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

    async def classify(
        self, text: str, *, parent_id: str, quest_id: str, models: bool = True
    ) -> Classification:
        """Classify one request; a model failure falls back to keywords, never an error.

        `models=False`: keywords only, for when the label cannot change the answer (no model
        is woken, and a first local load costs seconds on a small machine).
        """
        lanes: list[tuple[Lane, str]] = []
        if not models:
            return Classification(heuristic_intent(text), "keywords")
        if self._features.enabled("UNIFIED_CLASSIFICATION") and self._router.has_flagship():
            lanes.append((Lane.FLAGSHIP_FAST, "flagship"))
        if self._local_usable():
            lanes.append((Lane.LOCAL_UTILITY, "local"))
        for lane, source in lanes:
            intent = await self._ask(lane, text, parent_id, quest_id)
            if intent is not None:
                return Classification(intent, source)
        return Classification(heuristic_intent(text), "keywords")

    def _local_usable(self) -> bool:
        """Whether to ask the local model now. One still to load is warmed in the background
        and this message is labelled by keywords: the owner never waits seconds for a load."""
        router = self._router
        if isinstance(router, LocalAware) and not router.has_local():
            return False
        if isinstance(router, LocalWarming) and not router.local_ready():
            router.warm_local()
            return False
        return True

    async def _ask(self, lane: Lane, text: str, parent_id: str, quest_id: str) -> Intent | None:
        # The few-shot, constrained request of core.llm.intent: a tiny local model labels well
        # with it, and a larger one just better.
        request = intent_request(text, local=lane is Lane.LOCAL_UTILITY)
        try:
            answer = await self._router.complete(
                request, task_type="intent", lane=lane, parent_id=parent_id, quest_id=quest_id
            )
            return parse_label(answer.text)
        except (ProviderUnavailable, ValueError):
            return None
