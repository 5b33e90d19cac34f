"""Receipt kinds in one registry: checked as it is built, and the ledger's (and the test
suite's) answer to a kind that is not in it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from core.receipts.kinds import KindError, KindRegistry, ReceiptKind, Role, Section
from core.receipts.ledger import SqliteLedger
from core.receipts.model import Receipt
from core.receipts.registry import KINDS, GovernanceReceipt

REPO = Path(__file__).resolve().parents[3]


def test_every_kind_is_a_lowercase_word_declared_once() -> None:
    kind = ReceiptKind("calendar_booked", Role.EFFECT, "a calendar event booked")
    with pytest.raises(KindError, match="declared twice"):
        KindRegistry((kind, kind))
    with pytest.raises(KindError, match="not a lowercase word"):
        KindRegistry((ReceiptKind("x'); DROP TABLE receipts; --", Role.STEP, "sql"),))
    with pytest.raises(KindError, match="only a decision carries a verdict"):
        KindRegistry((ReceiptKind("calendar_booked", Role.EFFECT, "booked", verdict="yes"),))
    with pytest.raises(KindError, match="declared twice"):
        KINDS.plus(ReceiptKind("tool_run", Role.STEP, "a second tool_run"))


def test_the_governance_names_and_the_roles_the_page_reads_are_registered() -> None:
    assert KINDS.unregistered(GovernanceReceipt) == []
    assert KINDS.having(Role.UNDO) == ("change_undone", "undo_refused")
    assert KINDS.having(Role.PRESS) == ("button", "button_refused")
    assert {KINDS.get(name).verdict for name in KINDS.having(Role.DECISION)} >= {
        "approved",
        "denied",
        "expired",
    }
    assert KINDS.get("written_by_a_newer_version").role is Role.STEP  # an old ledger reads


def test_a_kind_reads_on_the_page_by_its_own_line_or_else_by_its_name_in_words() -> None:
    booked = ReceiptKind("calendar_booked", Role.EFFECT, "a calendar event booked")
    assert booked.shown_as == "calendar booked: {subject}"
    lined = ReceiptKind("calendar_booked", Role.EFFECT, "booked", "booked: {subject}")
    assert lined.shown_as == "booked: {subject}"
    assert KINDS.get("tool_run").shown_as == "ran: {subject}"
    assert (
        KINDS.get("written_by_a_newer_version").shown_as == "written by a newer version: {subject}"
    )


def test_the_digest_sections_count_their_own_kinds_in_declaration_order() -> None:
    assert KINDS.in_section(Section.HEALTH) == ("health_degraded", "health_recovered")
    assert KINDS.in_section(Section.USAGE) == ("router_decision",)
    jobs = ("scheduled_job_run", "scheduled_job_failed", "scheduled_job_skipped")
    assert KINDS.in_section(Section.JOBS) == jobs
    assert KINDS.having(Role.REQUEST) == ("inbound", *jobs)


async def test_an_unregistered_kind_is_stored_logged_once_and_never_refused(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        ledger.append(Receipt("calendar_booked", "first"))
        stored = await ledger.append_durable(Receipt("calendar_booked", "second"))
        await ledger.append_durable(Receipt("tool_run", "shell.exec"))
        assert stored.seq == 2  # kept, in order: a receipt is never lost over its name
        assert ledger.unregistered == {"calendar_booked"}
    logged = [r for r in caplog.records if "not registered" in r.getMessage()]
    assert len(logged) == 1
    assert "'calendar_booked'" in logged[0].getMessage()
    caplog.clear()  # written on purpose: the suite's guard must not fail this test


@pytest.mark.parametrize("durable", [False, True], ids=["queued", "durable"])
async def test_either_way_of_writing_notes_an_unregistered_kind_at_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, durable: bool
) -> None:
    async with SqliteLedger(tmp_path / "ledger.db", flush_interval=60) as ledger:
        receipt = Receipt("calendar_booked", "only")
        if durable:
            await ledger.append_durable(receipt)
        else:
            ledger.append(receipt)  # noted when queued, before any commit
        assert ledger.unregistered == {"calendar_booked"}
    (logged,) = [r.getMessage() for r in caplog.records if r.name == "core.receipts.ledger"]
    assert logged == (
        "receipt kind 'calendar_booked' is not registered in core/receipts/registry.py;"
        " stored anyway"
    )
    caplog.clear()  # written on purpose: the suite's guard must not fail this test


GUARDED = """
from pathlib import Path

from core.receipts.ledger import SqliteLedger
from core.receipts.model import Receipt


async def test_writes(tmp_path: Path) -> None:
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        await ledger.append_durable(Receipt({kind!r}, "x"))
"""


def run_guarded(tmp_path: Path, kind: str) -> subprocess.CompletedProcess[str]:
    """pytest on one test that writes `kind`, with the suite's guard on receipt kinds."""
    (tmp_path / "test_writes.py").write_text(GUARDED.format(kind=kind))
    return subprocess.run(
        [
            *(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"),
            *("-p", "tests.receipt_kinds", "-o", "asyncio_mode=auto", "--rootdir", str(tmp_path)),
            str(tmp_path / "test_writes.py"),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)},
    )


def test_the_suite_fails_a_test_that_writes_an_unregistered_kind(tmp_path: Path) -> None:
    failed = run_guarded(tmp_path, "calendar_booked")
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "receipt kinds written but not registered: calendar_booked" in failed.stdout
    passed = run_guarded(tmp_path, "tool_run")
    assert passed.returncode == 0, passed.stdout + passed.stderr
