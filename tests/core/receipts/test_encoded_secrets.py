"""Secrets in disguise are found and masked wherever the redactor runs (receipts, logs,
prompts, outbound arguments): raw, URL-encoded, base64 (plain, URL-safe, unpadded, at any
offset), hex, and one inside another; text that only looks encoded is left alone."""

from __future__ import annotations

import base64
from pathlib import Path
from urllib.parse import quote

import pytest

from core.llm.redaction import PiiRedactor
from core.receipts.ledger import SqliteLedger
from core.receipts.model import Receipt, ReceiptStatus
from core.receipts.redaction import MASK, Redactor

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
    assert Redactor().carries(FORMS[form])


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
    assert not Redactor().carries(text)


def test_an_encoded_secret_never_reaches_the_model() -> None:
    """The prompt redaction masks the run that decodes to a secret, and nothing else."""
    prompt = f"Output of base64 -w0 .env: {b64(LINE)} (done). Peas: {b64('Plant peas.')}"
    masked = PiiRedactor(Redactor()).text(prompt)
    assert b64(LINE) not in masked
    assert MASK in masked
    assert b64("Plant peas.") in masked  # not a secret: kept
    assert Redactor().text(LINE.encode().hex()) == MASK


async def test_a_receipt_never_keeps_an_encoded_secret(tmp_path: Path) -> None:
    """A command's output (base64 -w0 .env) is chained with the encoded run masked."""
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        receipt = Receipt(
            action_type="tool_run",
            action_name="shell.exec",
            inputs={"command": "base64 -w0 .env"},
            outputs={"output": b64(LINE), "hex": LINE.encode().hex()},
            status=ReceiptStatus.SUCCESS,
        )
        ledger.append(receipt)
        await ledger.flush()
        stored = await ledger.get(receipt.id)
    assert stored is not None
    assert b64(LINE) not in stored.outputs
    assert LINE.encode().hex() not in stored.outputs
    assert stored.decoded("outputs") == {"output": MASK, "hex": MASK}
