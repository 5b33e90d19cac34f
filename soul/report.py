"""Lint findings and the report that carries them."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from soul.schema import Soul


class Severity(StrEnum):
    """CRITICAL blocks activation; WARNING is shown but does not."""

    CRITICAL = "CRITICAL"
    WARNING = "WARNING"


@dataclass(frozen=True)
class Finding:
    """One problem: which check found it, how bad it is, and where.

    `path` is the key path in the document (``risk_rules.rules[2].tier``); `line` and
    `column` are 1-based positions in the YAML text when known.
    """

    check: str
    severity: Severity
    message: str
    path: str | None = None
    line: int | None = None
    column: int | None = None

    @property
    def location(self) -> str:
        """Where the problem is, in words ("" when the whole document is meant)."""
        parts = [self.path] if self.path else []
        if self.line is not None:
            parts.append(f"line {self.line}" + (f", column {self.column}" if self.column else ""))
        return ", ".join(parts)

    def describe(self) -> str:
        """One line: check, message and location."""
        where = f" (at {self.location})" if self.location else ""
        return f"{self.check}: {self.message}{where}"


@dataclass(frozen=True)
class LintReport:
    """The outcome of linting one soul text; `soul` is the parsed document when it parsed."""

    source: str
    findings: tuple[Finding, ...] = ()
    soul: Soul | None = field(default=None, compare=False, repr=False)

    @property
    def critical(self) -> tuple[Finding, ...]:
        """The findings that block activation."""
        return tuple(f for f in self.findings if f.severity is Severity.CRITICAL)

    @property
    def warnings(self) -> tuple[Finding, ...]:
        """The findings that are reported but do not block."""
        return tuple(f for f in self.findings if f.severity is Severity.WARNING)

    @property
    def ok(self) -> bool:
        """True when the soul parsed and no CRITICAL check failed."""
        return self.soul is not None and not self.critical

    def render(self) -> str:
        """Human-readable text: a verdict line, then one line per finding."""
        verdict = "OK" if self.ok else "REJECTED"
        counts = f"{len(self.critical)} critical, {len(self.warnings)} warning(s)"
        lines = [f"{self.source}: {verdict} ({counts})"]
        lines += [f"  {f.severity.value:<8} {f.describe()}" for f in self.findings]
        return "\n".join(lines)
