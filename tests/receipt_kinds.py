"""The suite's guard on receipt kinds: a test fails when anything it ran wrote a receipt
whose kind is not declared in core/receipts/registry.py.

The ledger stores such a receipt anyway and logs it once (so production never crashes over
a name); this fixture, autouse in tests/conftest.py, turns that log line into a failure of
the test that caused it, whether it ran the whole app or one component.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from core.receipts.ledger import UNREGISTERED

PHASES = ("setup", "call", "teardown")


@pytest.fixture(autouse=True)
def registered_receipt_kinds(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """Fail the test if a ledger logged a receipt kind missing from the registry."""
    yield
    written = sorted(
        {
            str(getattr(record, UNREGISTERED))
            for phase in PHASES
            for record in caplog.get_records(phase)  # type: ignore[arg-type]
            if hasattr(record, UNREGISTERED)
        }
    )
    if written:
        pytest.fail(
            f"receipt kinds written but not registered: {', '.join(written)}; declare each "
            "in core/receipts/registry.py (docs/architecture.md, How to add a receipt kind)",
            pytrace=False,
        )
