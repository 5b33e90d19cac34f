"""The keyword fallback for intent, and the label parser the local model's answer goes through."""

from __future__ import annotations

import pytest

from core.llm.intent import Intent, classify_intent, heuristic_intent, parse_label


@pytest.mark.parametrize(
    ("text", "intent"),
    [
        ("Plan a migration of my notes to the new layout", Intent.PLAN_REQUEST),
        ("What would be a good strategy for backups?", Intent.PLAN_REQUEST),
        ("Create a file called todo.txt", Intent.EXEC_REQUEST),
        ("please delete the old logs", Intent.EXEC_REQUEST),
        ("Plan the cleanup and then do it", Intent.MIXED_REQUEST),
        ("What is the capital of France?", Intent.KNOWLEDGE_REQUEST),
        ("Explain how DNS works", Intent.KNOWLEDGE_REQUEST),
        ("Do you know what time zones are?", Intent.KNOWLEDGE_REQUEST),
        ("hi!", Intent.CONVERSATIONAL),
        ("Thanks, that was great", Intent.CONVERSATIONAL),
    ],
)
def test_keywords_label_plain_requests(text: str, intent: Intent) -> None:
    assert heuristic_intent(text) is intent


@pytest.mark.parametrize(
    ("answer", "intent"),
    [
        ('"EXEC_REQUEST"', Intent.EXEC_REQUEST),
        ('"action"', Intent.EXEC_REQUEST),
        ('"both"', Intent.MIXED_REQUEST),
        ('{"intent": "PLAN_REQUEST"}', Intent.PLAN_REQUEST),
        (" CONVERSATIONAL ", Intent.CONVERSATIONAL),
    ],
)
def test_a_constrained_answer_parses_to_its_label(answer: str, intent: Intent) -> None:
    assert parse_label(answer) is intent


def test_an_answer_that_is_no_label_is_refused() -> None:
    with pytest.raises(ValueError, match="MAYBE"):
        parse_label('"MAYBE"')


async def test_without_a_router_the_keywords_decide() -> None:
    result = await classify_intent("Create a folder named reports", None)
    assert (result.intent, result.source) == (Intent.EXEC_REQUEST, "heuristic")
