"""Capability tokens: the policy's permission to run one exact action counts only in the
spelling it was issued in, like a button token."""

from __future__ import annotations

import pytest

from core.errors import PolicyDenied
from core.tools.capability import CapabilityTokens
from tests.fakes.spellings import decodes_alike, other_spellings

DIGEST = "a" * 64


def test_only_the_issued_spelling_of_a_capability_runs() -> None:
    tokens = CapabilityTokens(b"capability-test-secret", clock=lambda: 1_000_000.0)
    token = tokens.issue(DIGEST)
    tokens.check(token, DIGEST)  # the genuine one
    variants = other_spellings(token)
    assert sum(decodes_alike(v, token) for v in variants) > 40  # a lenient decoder's yes
    for variant in variants:
        with pytest.raises(PolicyDenied) as refused:
            tokens.check(variant, DIGEST)
        assert refused.value.rule == "capability-invalid", repr(variant)


def test_an_approved_token_runs_and_says_so_a_plain_one_does_not() -> None:
    tokens = CapabilityTokens(b"capability-test-secret", clock=lambda: 1_000_000.0)
    approved, plain = tokens.issue(DIGEST, approved=True), tokens.issue(DIGEST)
    tokens.check(approved, DIGEST)
    assert tokens.approved(approved, DIGEST)
    assert not tokens.approved(plain, DIGEST)
    assert not tokens.approved(approved, "b" * 64)
