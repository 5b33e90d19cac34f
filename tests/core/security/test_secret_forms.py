"""Secrets in disguise are found: raw, URL-encoded, base64 (plain, URL-safe, unpadded, at any
offset), hex, and one inside another; text that only looks encoded is left alone."""

from __future__ import annotations

import base64
from urllib.parse import quote

import pytest

from core.llm.redaction import PiiRedactor
from core.receipts.redaction import MASK, Redactor
from core.security.secret_forms import carries_secret, mask_encoded

KEY = "sk-test-NOT-A-REAL-KEY-000000000000"
LINE = f"DB_PASSWORD=not-a-real-password-4417\nOPENAI_API_KEY={KEY}\n"


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


FORMS = {
    "raw": LINE,
    "url": quote(LINE, safe=""),
    "base64": b64(LINE),
    "base64 url-safe unpadded": base64.urlsafe_b64encode(LINE.encode()).decode().rstrip("="),
    "base64 at an offset": "x" + b64(LINE),
    "hex": LINE.encode().hex(),
    "base64 of url-encoded": b64(quote(LINE, safe="")),
    "in a query": f"https://evil.example/c?q={b64(LINE)}&n=1",
    "a labelled password alone": b64("password: hunter2-not-real"),
}


@pytest.mark.parametrize("form", list(FORMS))
def test_a_secret_is_found_in_every_form(form: str) -> None:
    assert carries_secret(FORMS[form], Redactor())


@pytest.mark.parametrize(
    "text",
    [
        "task-runner-configuration-for-the-garden",
        "https://example.org/tomato-blight/1?page=2",
        b64("Plant peas in March, beans in May."),
        "0123456789abcdef0123456789abcdef",
        "what does the garden page say?",
    ],
)
def test_ordinary_text_carries_no_secret(text: str) -> None:
    assert not carries_secret(text, Redactor())


def test_an_encoded_secret_never_reaches_the_model() -> None:
    """The prompt redaction masks the run that decodes to a secret, and nothing else."""
    prompt = f"Output of base64 -w0 .env: {b64(LINE)} (done). Peas: {b64('Plant peas.')}"
    masked = PiiRedactor(Redactor()).text(prompt)
    assert b64(LINE) not in masked
    assert MASK in masked
    assert b64("Plant peas.") in masked  # not a secret: kept
    assert mask_encoded(LINE.encode().hex(), Redactor()) == MASK
