"""What the effect engine's refusals say: to the log in full, to the owner in words they can
act on, with at most five paths named and how many more."""

from __future__ import annotations

import pytest

from core.errors import PermanentError
from core.tools.effects.errors import (
    DigestMismatch,
    DryRunGone,
    EffectsError,
    StaleEffects,
    UndoRefused,
    UndoUnavailable,
)

FIVE = ("a", "b", "c", "d", "e")


def test_five_paths_are_all_named() -> None:
    error = StaleEffects(FIVE)
    assert str(error) == "the workspace no longer matches the dry run: a, b, c, d, e"
    assert error.user_message == (
        "Not applied: the workspace no longer matches the dry run: a, b, c, d, e."
        " Run the command again."
    )
    assert error.paths == FIVE


def test_past_five_the_rest_are_counted() -> None:
    error = UndoRefused([*FIVE, "f", "g"])
    assert str(error) == "undo refused: these files changed after it: a, b, c, d, e and 2 more"
    assert (
        error.user_message == "Not undone: these files changed after it: a, b, c, d, e and 2 more."
    )
    assert error.paths == (*FIVE, "f", "g")


def test_a_dry_run_gone_says_why() -> None:
    error = DryRunGone("3f2a", "expired")
    assert (str(error), error.user_message) == ("dry run 3f2a: expired", "That change expired.")
    assert (error.dry_run_id, error.why) == ("3f2a", "expired")


def test_an_approval_for_other_effects_changes_nothing() -> None:
    error = DigestMismatch("3f2a")
    assert str(error) == "dry run 3f2a: the approved effects are not the dry run's"
    assert error.user_message == "That approval does not match the change; nothing was applied."


def test_an_undo_out_of_reach_says_why() -> None:
    error = UndoUnavailable("h01", "the undo window has passed")
    assert str(error) == "change h01: the undo window has passed"
    assert error.user_message == "Cannot undo: the undo window has passed."
    assert (error.change_id, error.why) == ("h01", "the undo window has passed")


@pytest.mark.parametrize(
    "error",
    [StaleEffects(FIVE), UndoRefused(FIVE), DryRunGone("x", "y"), DigestMismatch("x"),
     UndoUnavailable("x", "y")],
)  # fmt: skip
def test_every_refusal_is_permanent(error: EffectsError) -> None:
    assert isinstance(error, PermanentError)  # not retried: nothing was changed
