"""The local_redaction lane's deterministic masking: personal data out, ordinary text kept."""

from __future__ import annotations

import tracemalloc

import pytest

from core.llm.redaction import REMEMBERED, REMEMBERED_CHARS, PiiRedactor
from core.llm.types import CompletionRequest, Message, Role, ToolCall
from core.receipts.redaction import Redactor

REDACT = PiiRedactor(Redactor(["known-secret-123"]))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("write to jane.doe@example.org today", "write to [EMAIL] today"),
        ("call 555-123-4567 now", "call [PHONE] now"),
        ("call (020) 7946 0958", "call [PHONE]"),
        ("call +14155550123", "call [PHONE]"),
        ("card 4111 1111 1111 1111 expires", "card [CARD] expires"),
        ("iban DE89 3704 0044 0532 0130 00", "iban [IBAN]"),
        ("token known-secret-123 here", "token [REDACTED] here"),
        ("password=hunter22", "password=[REDACTED]"),
    ],
)
def test_personal_data_is_masked(text: str, expected: str) -> None:
    assert REDACT.text(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Meeting at 10:30 on 2026-11-23 in room 12",
        "order 12345, version 3.11.4, port 8080",
        "server 192.168.100.200 answered",
        "timestamps 1732350000 and 1732350000123",
        "a number that fails Luhn: 1234 5678 9012 3456",
    ],
)
def test_ordinary_numbers_are_kept(text: str) -> None:
    assert REDACT.text(text) == text


def test_a_whole_request_is_masked_including_tool_arguments() -> None:
    request = CompletionRequest(
        messages=(
            Message(Role.USER, "mail bob@example.com"),
            Message(
                Role.ASSISTANT,
                tool_calls=(ToolCall("c1", "send_mail", {"to": "bob@example.com", "n": 2}),),
            ),
        )
    )
    masked = REDACT.request(request)
    assert masked.messages[0].content == "mail [EMAIL]"
    assert masked.messages[1].tool_calls[0].arguments == {"to": "[EMAIL]", "n": 2}
    assert request.messages[0].content == "mail bob@example.com"  # the original is untouched


def test_a_secret_learned_after_a_text_was_masked_is_masked_in_it_next_time() -> None:
    secrets = Redactor()
    redact = PiiRedactor(secrets)
    prompt = "the owner's vault key is vault-key-98765, write to jane.doe@example.org"
    first = redact.text(prompt)
    assert first == "the owner's vault key is vault-key-98765, write to [EMAIL]"
    assert redact.text(prompt) == first  # the same prompt again: the same masking
    secrets.add_secret("vault-key-98765")
    assert redact.text(prompt) == "the owner's vault key is [REDACTED], write to [EMAIL]"


def test_masking_stays_correct_past_the_number_of_texts_remembered() -> None:
    redact = PiiRedactor(Redactor())
    texts = [f"turn {i}: mail a{i}@example.org" for i in range(2000)]
    for text in texts:
        redact.text(text)
    for i in (0, 1999):
        assert redact.text(texts[i]) == f"turn {i}: mail [EMAIL]"


def test_what_it_remembers_stays_bounded_in_size_when_every_prompt_is_new() -> None:
    """Each request's system prompt differs (memory's context in it): a long day of them keeps
    at most REMEMBERED_CHARS characters, not REMEMBERED whole prompts."""
    redact = PiiRedactor(Redactor())
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i in range(REMEMBERED):
            prompt = f"request {i}: mail a{i}@example.org. " + "the owner's context. " * 400
            assert redact.text(prompt).startswith(f"request {i}: mail [EMAIL]")
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    whole_prompts = REMEMBERED * 2 * 8_000  # what REMEMBERED prompts and their masks take
    assert held < 3 * REMEMBERED_CHARS < whole_prompts


def test_a_text_too_big_to_remember_is_masked_but_pushes_out_nothing() -> None:
    redact = PiiRedactor(Redactor())
    prompt = "the system prompt, mail ada@example.org"
    first = redact.text(prompt)
    huge = "mail bob@example.com " * (REMEMBERED_CHARS // 10)
    for _ in range(2):  # not remembered: masked afresh each time
        masked = redact.text(huge)
        assert "bob@example.com" not in masked
        assert masked.startswith("mail [EMAIL] mail [EMAIL]")
    assert redact.text(prompt) is first  # still remembered: the same masked text, not redone
