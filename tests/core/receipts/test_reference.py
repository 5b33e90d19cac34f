"""docs/receipts.md is what the kinds' registry says now: regenerated, it is the checked-in
file; each kind stands in its role's table with what it records, its line and its verdict."""

from __future__ import annotations

import runpy
import subprocess
import sys
from pathlib import Path

import pytest

from core.receipts.kinds import KindRegistry, ReceiptKind, Role, Section
from core.receipts.reference import render_reference
from core.receipts.registry import KINDS

REPO = Path(__file__).resolve().parents[3]
REFERENCE = REPO / "docs" / "receipts.md"
REGENERATE = "python -m core.receipts.reference > docs/receipts.md"


def table_under(text: str, heading: str) -> list[str]:
    """The rows of the table under the `## heading...` line (its head and rule left out)."""
    after = text.split(f"\n## {heading}", 1)[1].split("\n\n", 2)[1]
    return after.splitlines()[2:]


def test_the_checked_in_reference_is_the_generated_one() -> None:
    assert REFERENCE.read_text(encoding="utf-8") == render_reference(), f"run `{REGENERATE}`"


def test_the_command_prints_the_reference() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "core.receipts.reference"],
        capture_output=True, text=True, check=False, cwd=REPO,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout == REFERENCE.read_text(encoding="utf-8")


def test_run_as_a_program_it_prints_the_reference_and_imported_it_prints_nothing(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """In this process (the command above runs in a fresh one, out of a mutant's reach)."""
    for run_name, printed in (("__main__", render_reference()), ("core.receipts.reference", "")):
        monkeypatch.delitem(sys.modules, "core.receipts.reference", raising=False)
        runpy.run_module("core.receipts.reference", run_name=run_name)
        assert capsys.readouterr().out == printed, run_name


def test_every_kind_is_listed_once_with_what_it_records() -> None:
    text = render_reference()
    for name in KINDS.names:
        rows = [line for line in text.splitlines() if line.startswith(f"| `{name}` |")]
        assert len(rows) == 1, name
        assert f"| {KINDS.get(name).about} |" in rows[0], name


def test_a_kind_reads_as_its_line_or_where_it_is_shown_instead() -> None:
    kinds = KindRegistry(
        (
            ReceiptKind(
                "calendar_booked", Role.EFFECT, "a calendar event booked", "booked: {subject}"
            ),
            ReceiptKind("calendar_checked", Role.STEP, "a calendar read"),
            ReceiptKind("calendar_asked", Role.ASK, "the owner asked to book"),
            ReceiptKind("calendar_ok", Role.DECISION, "the owner agreed", verdict="booked"),
            ReceiptKind("calendar_rule", Role.DECISION, "the Soul's rule", "rule: {subject}"),
            ReceiptKind("calendar_pressed", Role.PRESS, "a press on the card"),
        )
    )
    text = render_reference(kinds)
    assert table_under(text, "Effects") == [
        "| `calendar_booked` | a calendar event booked | `booked: {subject}` |"
    ]
    assert table_under(text, "Steps") == [
        "| `calendar_checked` | a calendar read | `calendar checked: {subject}` |"
    ]
    assert table_under(text, "Asks") == [
        "| `calendar_asked` | the owner asked to book | in the approval's line |"
    ]
    assert table_under(text, "Decisions") == [
        "| `calendar_ok` | the owner agreed | in the approval's line | booked |",
        "| `calendar_rule` | the Soul's rule | `rule: {subject}` |  |",
    ]
    assert table_under(text, "Presses") == [
        "| `calendar_pressed` | a press on the card | no line |"
    ]


def test_a_role_no_kind_plays_has_no_table() -> None:
    text = render_reference(KindRegistry((ReceiptKind("calendar_booked", Role.UNDO, "undone"),)))
    assert [line for line in text.splitlines() if line.startswith("## ")] == [
        "## Undos: shown in the story of the request that made the change",
        "## The digest's sections",
    ]


def test_each_digest_section_names_the_kinds_it_counts() -> None:
    kinds = KindRegistry(
        (
            ReceiptKind("backup_done", Role.STEP, "a backup", section=Section.JOBS),
            ReceiptKind("backup_late", Role.STEP, "a late backup", section=Section.JOBS),
        )
    )
    assert table_under(render_reference(kinds), "The digest's sections") == [
        "| jobs | the scheduled runs' outcomes | `backup_done`, `backup_late` |",
        "| health | health's turns |  |",
        "| usage | the model calls' tokens and cost |  |",
    ]
