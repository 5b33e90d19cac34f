"""The suite's guard on decisions (issue 35): after each test, every policy decision its
ledgers hold is decided again from the inputs its receipt recorded, under the Soul that
made it, and must come out the same.

A decision whose Soul is not on disk as it was (a test's own Soul object, a version file the
test rewrote) cannot be replayed and is passed over; so is a ledger the test damaged on
purpose. Autouse in tests/conftest.py, like the receipt kinds' guard.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.governance import soul_store
from core.governance.replay import recorded_souls, replay
from core.receipts.history import stored_of_kind
from core.receipts.registry import GovernanceReceipt

WHERE = ("ledger.db", "*/ledger.db", "*/*/ledger.db")  # a test's homes sit near tmp_path


def mismatches(root: Path) -> list[str]:
    """Every recorded decision under `root` that comes out otherwise when decided again."""
    found = []
    for path in sorted({p for pattern in WHERE for p in root.glob(pattern)}):
        receipts = stored_of_kind(path, str(GovernanceReceipt.POLICY_DECISION))
        try:
            report = replay(receipts, recorded_souls(soul_store(path.parent)))
        except sqlite3.Error:  # not a ledger, or one the test broke on purpose
            continue
        found += [f"{path}: {step.explain()}" for step in report.steps if not step.matches]
    return found


@pytest.fixture(autouse=True)
def replayed_decisions(tmp_path: Path) -> Iterator[None]:
    """Fail the test if a decision it recorded is decided otherwise from its receipt."""
    yield
    differing = mismatches(tmp_path)
    if differing:
        pytest.fail(
            "policy decisions that do not replay (a decision read something its receipt does "
            "not record; core/governance/decision.py):\n" + "\n".join(differing),
            pytrace=False,
        )
