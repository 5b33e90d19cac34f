"""The receipt record itself: the canonical JSON its hash covers, written out here by hand
(a ledger written by an older Lancelot must still verify, so every byte of it is fixed), the
time and id each receipt gets, and the stored form read back."""

from __future__ import annotations

import hashlib
import re
import time
from datetime import UTC, datetime
from pathlib import PurePosixPath

import pytest

from core.receipts import model
from core.receipts.model import (
    GENESIS_HASH,
    Receipt,
    ReceiptStatus,
    StoredReceipt,
    canonical_json,
    chain_hash,
    new_receipt_id,
)

SAMPLES = [
    None,
    {},
    [],
    {"b": 1, "a": [1, 2.5, None, True, False]},
    {"z": {"y": 2, "x": 1}, "text": 'é ü 漢字 \n "quoted" \\ \u2028'},
    {"nan": float("nan"), "inf": float("inf")},
    {1: "int key", 2: "two"},
]


def test_canonical_json_is_sorted_compact_and_keeps_unicode() -> None:
    assert canonical_json(None) == "null"
    assert canonical_json({}) == "{}"
    assert canonical_json({"b": 1, "a": [1, 2.5, None, True]}) == '{"a":[1,2.5,null,true],"b":1}'
    assert canonical_json({"z": {"y": 2, "x": 1}}) == '{"z":{"x":1,"y":2}}'
    assert canonical_json({"t": 'é "q" \\ \n'}) == '{"t":"é \\"q\\" \\\\ \\n"}'
    assert canonical_json({"n": float("nan")}) == '{"n":NaN}'


def test_a_value_json_cannot_hold_becomes_its_text() -> None:
    assert canonical_json({"path": PurePosixPath("/w/a.txt")}) == '{"path":"/w/a.txt"}'


def test_a_key_json_cannot_hold_is_refused_not_dropped() -> None:
    with pytest.raises(TypeError):
        canonical_json({("a", "b"): 1})


@pytest.mark.parametrize("value", SAMPLES)
def test_the_fallback_encoder_writes_the_same_bytes(
    value: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Where json's C core is missing (another Python), the pure encoder serves: same hashes.
    with_c_core = canonical_json(value)
    monkeypatch.setattr(model, "_c_encode", None)
    assert canonical_json(value) == with_c_core


def test_the_chain_link_is_sha256_of_the_previous_hash_and_the_canonical_json() -> None:
    content = {"seq": 1, "id": "r1", "inputs": '{"cmd":"ls"}', "duration_ms": None}
    by_hand = '{"duration_ms":null,"id":"r1","inputs":"{\\"cmd\\":\\"ls\\"}","seq":1}'
    expected = hashlib.sha256((GENESIS_HASH + by_hand).encode()).hexdigest()
    assert chain_hash(GENESIS_HASH, content) == expected
    assert GENESIS_HASH == "0" * 64


def test_the_statuses_are_the_words_the_ledger_holds() -> None:
    assert [s.value for s in ReceiptStatus] == [
        "success",
        "failure",
        "refused",
        "pending",
        "skipped",
    ]


def test_a_receipts_time_is_utc_to_the_microsecond() -> None:
    before = datetime.now(UTC)
    stamps = [Receipt("a", "b").timestamp for _ in range(3)]
    after = datetime.now(UTC)
    for stamp in stamps:
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", stamp), stamp
        at = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
        assert before.replace(microsecond=0) <= at <= after
    assert stamps == sorted(stamps)


def test_a_new_second_gets_its_own_stamp() -> None:
    first = model._now()
    time.sleep(1.01 - time.time() % 1)  # into the next second
    assert model._now()[:19] != first[:19]


def test_ids_are_32_hex_digits_that_sort_by_time() -> None:
    ids = [new_receipt_id() for _ in range(600)]  # more than one block of random tails
    assert all(re.fullmatch(r"[0-9a-f]{32}", i) for i in ids)
    assert len(set(ids)) == len(ids)
    millis = int(time.time() * 1000)
    assert abs(int(ids[-1][:12], 16) - millis) < 5_000
    later = new_receipt_id()
    time.sleep(0.002)
    assert new_receipt_id()[:12] > later[:12]


def stored(**columns: str) -> StoredReceipt:
    base = dict(seq=1, id="r1", timestamp="t", action_type="a", action_name="b", inputs="null",
                outputs="null", status="success", duration_ms=None, token_count=None,
                cognition_tier=None, parent_id=None, quest_id=None, error_message=None,
                metadata="{}", prev_hash=GENESIS_HASH, hash="")  # fmt: skip
    return StoredReceipt(**{**base, **columns})  # type: ignore[arg-type]


def test_a_stored_json_column_reads_back_as_data_or_as_the_text_it_is() -> None:
    receipt = stored(inputs='{"cmd":"ls"}', outputs="not json")
    assert receipt.decoded("inputs") == {"cmd": "ls"}
    assert receipt.decoded("outputs") == "not json"
    assert receipt.decoded("metadata") == {}
