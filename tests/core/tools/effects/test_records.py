"""How a kept change is named to the owner: a shell command with its prompt, a file tool's
change by what it did."""

from __future__ import annotations

from core.tools.base import ToolResult
from core.tools.effects.effectset import EffectSet
from core.tools.effects.records import Change, DryRun


def test_a_commands_change_is_shown_as_the_command_line() -> None:
    change = Change("3f2a9c", "rm -r old", 1.0, 2.0, EffectSet())
    assert change.shown == "$ rm -r old"
    assert change.state == "applied"


def test_a_file_tools_change_is_shown_as_what_it_did() -> None:
    # "h": the prefix journals already hold; a dry run's id is hex, so never starts with it.
    change = Change("h01ab", "wrote notes.md", 1.0, 2.0, EffectSet())
    assert change.shown == "wrote notes.md"


def test_a_dry_run_waits_for_a_decision_until_told_otherwise() -> None:
    run = DryRun("3f2a9c", "rm x", 1.0, 2.0, ToolResult(0, ""), EffectSet())
    assert run.state == "pending"


def test_its_summary_is_its_effects_summary() -> None:
    change = Change("3f2a9c", "true", 1.0, 2.0, EffectSet())
    assert change.summary == "changes nothing in the workspace"
