"""Intent classification (keywords, local lane, flagship) and life without a flagship."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.agent.quest import AgentLimits
from core.llm.intent import KINDS, Intent, heuristic_intent
from core.llm.types import Completion, CompletionRequest, Lane
from tests.core.agent.stage import Stage, stage
from tests.fakes.owner import say
from tests.fakes.scripted_model import ScriptedRouter, final, text


@pytest.mark.parametrize(
    ("message", "intent"),
    [
        ("hi", Intent.CONVERSATIONAL),
        ("thanks!", Intent.CONVERSATIONAL),
        ("what is a tamper-evident ledger?", Intent.KNOWLEDGE_REQUEST),
        ("how do I find large files?", Intent.KNOWLEDGE_REQUEST),
        ("delete old.txt", Intent.EXEC_REQUEST),
        ("can you list the files in my workspace?", Intent.EXEC_REQUEST),
        ("what would be a good strategy for backups?", Intent.PLAN_REQUEST),
        ("plan the cleanup and then delete the temp files", Intent.MIXED_REQUEST),
    ],
)
def test_keyword_fallback(message: str, intent: Intent) -> None:
    assert heuristic_intent(message) is intent


def local_model(answer: str) -> object:
    def respond(request: CompletionRequest) -> Completion:
        if request.json_schema is not None:
            return Completion(json.dumps({"intent": answer}), provider="local")
        return Completion("Paris is the capital of France.", provider="local")

    return respond


async def test_the_local_lane_classifies_when_a_local_model_exists(lancelot: Stage) -> None:
    router = lancelot.model(
        final("Here is a plan-free answer."), local=local_model("CONVERSATIONAL")
    )
    await lancelot.say("delete old.txt")  # keywords would say EXEC_REQUEST
    (intent,) = await lancelot.receipts("intent")
    assert intent.action_name == "CONVERSATIONAL"
    assert intent.decoded("outputs") == {"source": "local"}
    first = router.calls[0]
    assert first.lane is Lane.LOCAL_UTILITY
    assert first.request.json_schema is not None
    assert first.request.json_schema == {"enum": list(KINDS)}  # a constrained label


async def test_a_broken_local_answer_falls_back_to_keywords(lancelot: Stage) -> None:
    lancelot.model(final("ok"), local=local_model("NOT_AN_INTENT"))
    await lancelot.say("what is a receipt?")
    (intent,) = await lancelot.receipts("intent")
    assert (intent.action_name, intent.decoded("outputs")["source"]) == (
        "KNOWLEDGE_REQUEST",
        "keywords",
    )


async def test_unified_classification_asks_the_flagship(tmp_path: Path) -> None:
    async with stage(tmp_path, {"FEATURE_UNIFIED_CLASSIFICATION": "1"}) as lancelot:
        router = lancelot.model(
            text(json.dumps({"intent": "KNOWLEDGE_REQUEST"})), final("An answer.")
        )
        await lancelot.say("delete old.txt")
        (intent,) = await lancelot.receipts("intent")
        assert (intent.action_name, intent.decoded("outputs")["source"]) == (
            "KNOWLEDGE_REQUEST",
            "flagship",
        )
        assert router.calls[0].lane is Lane.FLAGSHIP_FAST
        assert router.calls[0].task_type == "intent"


async def test_without_any_provider_free_text_gets_an_honest_answer(lancelot: Stage) -> None:
    # The app as assembled: no router given, so no provider at all.
    card = await lancelot.say("delete old.txt")
    assert card.title == "No model provider configured"
    for setting in ("LANCELOT_PROVIDER", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
        assert setting in card.body
    status = await lancelot.say("/status")
    assert dict(status.fields)["Agent"] == "no model provider (commands only)"
    (lancelot.workspace / "a.txt").write_text("x")
    ran = await say(lancelot.app, lancelot.phone, "/run ls /workspace")
    assert "a.txt" in ran.body  # deterministic commands still work


async def test_the_default_small_model_is_not_woken_for_a_canned_answer(
    lancelot: Stage,
) -> None:
    router = lancelot.model(flagship=False, local=local_model("KNOWLEDGE_REQUEST"))
    card = await lancelot.say("what is the capital of France?")
    assert card.title == "No model provider configured"
    assert "LANCELOT_PROVIDER" in card.body
    # Its label could not change this answer, so it was not even woken for one.
    assert router.calls == []
    (intent,) = await lancelot.receipts("intent")
    assert intent.decoded("outputs")["source"] == "keywords"


async def test_without_a_flagship_a_chosen_local_model_answers_questions_labelled(
    lancelot: Stage,
) -> None:
    chosen = AgentLimits(local_answers=True)  # LANCELOT_LOCAL_MODEL names the owner's model
    lancelot.model(flagship=False, local=local_model("KNOWLEDGE_REQUEST"), limits=chosen)
    card = await lancelot.say("what is the capital of France?")
    assert card.title == "Answer (local model)"
    assert "Paris" in card.body
    assert "small local model" in card.body
    assert "LANCELOT_PROVIDER" in card.body
    # An action request is not handed to the small model.
    lancelot.model(flagship=False, local=local_model("EXEC_REQUEST"), limits=chosen)
    action = await lancelot.say("delete old.txt")
    assert action.title == "No model provider configured"


class LoadingRouter(ScriptedRouter):
    """A scripted router whose local model is still loading until `ready` is set."""

    ready = False
    warmed = 0

    def local_ready(self) -> bool:
        return self.ready

    def warm_local(self) -> None:
        self.warmed += 1


async def test_a_local_model_still_loading_is_warmed_and_keywords_answer_meanwhile(
    lancelot: Stage,
) -> None:
    router = LoadingRouter(
        (final("An answer."), final("Another answer.")), local=local_model("CONVERSATIONAL")
    )
    lancelot.use(router)
    await lancelot.say("delete old.txt")
    assert router.warmed == 1  # loading started, and this message did not wait for it
    router.ready = True
    await lancelot.say("delete old.txt")
    first, second = await lancelot.receipts("intent")
    assert (first.action_name, first.decoded("outputs")["source"]) == ("EXEC_REQUEST", "keywords")
    assert (second.action_name, second.decoded("outputs")["source"]) == ("CONVERSATIONAL", "local")
