"""The soul's error tree; core translates these into its own errors at the boundary."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from soul.report import LintReport


class SoulError(Exception):
    """Base of every error the soul package raises; `str()` is one line fit for the owner."""


class SoulRejected(SoulError):
    """A soul text failed a CRITICAL lint check and was not activated."""

    def __init__(self, report: LintReport) -> None:
        critical = report.critical
        first = critical[0].describe() if critical else "failed lint"
        more = f" (+{len(critical) - 1} more)" if len(critical) > 1 else ""
        super().__init__(f"{report.source} rejected: {first}{more}")
        self.report = report


class AmendmentError(SoulError):
    """An amendment operation is not possible."""


class AmendmentNotFound(AmendmentError):
    """No amendment with that id exists."""


class InvalidTransition(AmendmentError):
    """The amendment's status does not allow this step (e.g. activating a PENDING one)."""


class StaleAmendment(AmendmentError):
    """The amendment was written against a version that is no longer active."""


class UnparseableCommand(SoulError):
    """A shell command line cannot be tokenized (e.g. an unclosed quote)."""


class BeyondReading(UnparseableCommand):
    """A command line past the reading's limits (nesting, words, wrappers): the shell may
    well run it, so it is refused even where text that is no command line is skipped."""
