"""A checkpoint's signed bytes, written out by hand: checkpoints an older Lancelot signed
must still verify, so every byte of what the signature covers is fixed; its link, its
fingerprint, and what a page asks for by default."""

from __future__ import annotations

import hashlib

from core.receipts.base import CHAIN_START, Checkpoint, ReceiptQuery, VerifyReport, fingerprint

HEAD = "ab" * 32
TIME = "2026-11-28T12:00:00.000000Z"


def test_a_numbered_checkpoint_signs_its_number_link_and_state() -> None:
    point = Checkpoint(1000, HEAD, TIME, "sig", number=3, previous="cd" * 32)
    assert not point.legacy
    assert point.message == (
        b"lancelot-checkpoint-v2\n3\n1000\n" + HEAD.encode() + b"\n" + TIME.encode() + b"\n"
        + b"cd" * 32 + b"\n"
    )  # fmt: skip


def test_a_legacy_checkpoint_signs_what_it_said_then() -> None:
    point = Checkpoint(1000, HEAD, TIME, "sig", number=0, previous="")
    assert point.legacy
    assert point.message == (
        b"lancelot-checkpoint-v1\n1000\n" + HEAD.encode() + b"\n" + TIME.encode() + b"\n"
    )


def test_the_link_is_the_sha256_of_the_signed_bytes() -> None:
    point = Checkpoint(5, HEAD, TIME, "sig", number=1, previous=CHAIN_START)
    assert point.link == hashlib.sha256(point.message).hexdigest()
    assert CHAIN_START == "0" * 64


def test_a_fingerprint_is_the_count_and_sixteen_hex_of_the_head() -> None:
    assert fingerprint(1234, HEAD) == "1234:abababababababab"
    point = Checkpoint(1234, HEAD, TIME, "sig", number=1, previous=CHAIN_START)
    assert point.fingerprint == "1234:abababababababab"


def test_a_page_asks_for_fifty_of_everything_from_the_newest() -> None:
    assert ReceiptQuery() == ReceiptQuery(None, None, None, None, 50)


def test_a_report_is_readable_and_names_nothing_unless_told() -> None:
    report = VerifyReport(ok=True, checked=0)
    assert (report.readable, report.checkpoints, report.key, report.file) == (True, 0, None, None)
    assert (report.first_bad_seq, report.reason, report.head) == (None, None, None)
    assert report.last_checkpoint is None
