"""The write path's hashing shortcuts give exactly the chain's definition."""

from __future__ import annotations

import json
import logging
import random
import re
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

import pytest

from core.receipts.chain import content_json, ledger_row
from core.receipts.model import GENESIS_HASH, Receipt, StoredReceipt, canonical_json
from core.receipts.redaction import Redactor


class Kind(StrEnum):
    TOOL = "tool"


TEXTS: list[Any] = [
    "",
    "plain",
    "ünïcødé ☃",
    'q"uo\\te',
    "line\nbreak\t\x00\x1f",
    "\u2028",
    Kind.TOOL,
]
NUMBERS: list[Any] = [None, 0, 7, -3, 10**20, 1.5, -0.0, 1e300, 5e-324, float("nan"), float("inf")]


def random_content(rng: random.Random) -> dict[str, Any]:
    def text() -> Any:
        return rng.choice(TEXTS)

    content = {
        "action_name": text(),
        "action_type": text(),
        "cognition_tier": rng.choice([None, text()]),
        "duration_ms": rng.choice([*NUMBERS, True]),
        "error_message": rng.choice([None, text()]),
        "id": text(),
        "inputs": canonical_json({"a": text(), "n": rng.choice(NUMBERS)}),
        "metadata": "{}",
        "outputs": text(),
        "parent_id": rng.choice([None, text(), 3]),
        "quest_id": rng.choice([None, text()]),
        "seq": rng.choice([1, 2**40, True]),
        "status": text(),
        "timestamp": text(),
        "token_count": rng.choice([*NUMBERS, False]),
    }
    assert list(content) == sorted(content)
    return content


def test_content_json_is_the_canonical_json_for_any_field_values() -> None:
    rng = random.Random(11)
    for _ in range(5000):
        content = random_content(rng)
        assert content_json(content) == canonical_json(content)


def test_ledger_rows_carry_the_hash_that_verification_recomputes() -> None:
    redactor = Redactor()
    prev, tokens = "0" * 64, list[Any]([None, 4, 5.0, 2])  # 5.0: stored (and hashed) as 5
    for i, duration in enumerate((1.25, 3, None, float("inf"))):
        receipt = Receipt(
            Kind.TOOL,
            f"name-{i}",
            inputs={"password": "hunter2", "x": [i, "é"]},
            outputs=None,
            duration_ms=duration,
            token_count=tokens[i],
            parent_id="p" if i else None,
            error_message="bad" if i == 2 else None,
        )
        stored = StoredReceipt(*ledger_row(redactor, receipt, i + 1, prev))
        assert stored.hash == stored.expected_hash()
        assert stored.prev_hash == prev
        assert "hunter2" not in stored.inputs
        prev = stored.hash


def test_receipts_get_unique_ids_and_utc_microsecond_timestamps() -> None:
    before = datetime.now(UTC)
    receipts = [Receipt("command", "x") for _ in range(1000)]
    after = datetime.now(UTC)
    assert len({r.id for r in receipts}) == 1000
    for r in receipts:
        assert re.fullmatch(r"[0-9a-f]{32}", r.id)
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", r.timestamp)
        assert before <= datetime.fromisoformat(r.timestamp.replace("Z", "+00:00")) <= after


def unstorable(text: str = "") -> str:
    """Text JSON takes but UTF-8 cannot hold: a lone surrogate."""
    return "caf\udce9" + text


def stored_row(receipt: Receipt) -> StoredReceipt:
    return StoredReceipt(*ledger_row(Redactor(), receipt, 1, GENESIS_HASH))


def test_a_receipt_json_cannot_hold_keeps_its_names_links_and_a_bounded_account(
    caplog: pytest.LogCaptureFixture,
) -> None:
    receipt = Receipt(
        "tool_run",
        "fetch",
        outputs=unstorable("x" * 10_000),
        token_count=3,
        duration_ms=1.5,
        quest_id="q",
        metadata={"k": 1},
    )
    with caplog.at_level(logging.ERROR, logger="core.receipts.chain"):
        stored = stored_row(receipt)
    assert stored.hash == stored.expected_hash()
    kept = (stored.id, stored.timestamp, stored.action_type, stored.action_name)
    assert kept == (receipt.id, receipt.timestamp, "tool_run", "fetch")
    assert (stored.parent_id, stored.cognition_tier, stored.quest_id) == (None, None, "q")
    assert (stored.inputs, stored.token_count, stored.duration_ms) == ("null", 3, 1.5)
    account = json.loads(stored.outputs)
    assert len(account) == 4000  # the repr, cut to a bounded size
    assert account.startswith("'caf\\udce9xxx")
    assert json.loads(stored.metadata) == {"salvaged": "{'k': 1}"}
    assert (stored.error_message or "").startswith("receipt data could not be stored as given")
    # The log names the receipt and the error's kind, never the data.
    [line] = [r.getMessage() for r in caplog.records]
    assert (
        line == f"receipt {receipt.id} (tool_run) stored with its data as text: UnicodeEncodeError"
    )


def test_a_salvaged_receipt_with_empty_names_reads_question_marks() -> None:
    stored = stored_row(Receipt("", "", outputs=unstorable(), id="", timestamp=""))
    assert (stored.action_type, stored.action_name, stored.id, stored.timestamp) == ("?",) * 4
    assert stored.hash == stored.expected_hash()


class Unprintable:
    """A value neither JSON nor repr can write."""

    def __repr__(self) -> str:
        raise RuntimeError("no repr")


def test_a_value_whose_repr_fails_is_named_by_its_type() -> None:
    stored = stored_row(Receipt("tool_run", "odd", inputs={"v": 1}, outputs=Unprintable()))
    assert json.loads(stored.outputs) == "<unprintable Unprintable>"
    assert json.loads(stored.inputs) == "{'v': 1}"
