"""What a lint finding and a report say to the owner, and the error a rejected soul raises."""

from __future__ import annotations

import pytest

from soul.errors import SoulRejected
from soul.report import Finding, LintReport, Severity
from soul.schema import Soul

CRIT, WARN = Severity.CRITICAL, Severity.WARNING


@pytest.mark.parametrize(
    ("finding", "location", "described"),
    [
        (Finding("schema", CRIT, "bad"), "", "schema: bad"),
        (Finding("schema", CRIT, "bad", path="a.b"), "a.b", "schema: bad (at a.b)"),
        (Finding("schema", CRIT, "bad", line=3), "line 3", "schema: bad (at line 3)"),
        (
            Finding("schema", CRIT, "bad", path="a[0]", line=3, column=7),
            "a[0], line 3, column 7",
            "schema: bad (at a[0], line 3, column 7)",
        ),
        (Finding("x", WARN, "m", line=1, column=0), "line 1", "x: m (at line 1)"),
    ],
)
def test_a_finding_says_where_in_words(finding: Finding, location: str, described: str) -> None:
    assert finding.location == location
    assert finding.describe() == described


def test_a_report_counts_and_lists_its_findings(v1: Soul) -> None:
    crit = Finding("schema", CRIT, "missing key 'name'", path="name", line=2, column=1)
    warn = Finding("tone", WARN, "a long mission")
    rejected = LintReport("soul_v2.yaml", (warn, crit), None)
    assert (rejected.critical, rejected.warnings, rejected.ok) == ((crit,), (warn,), False)
    assert rejected.render() == (
        "soul_v2.yaml: REJECTED (1 critical, 1 warning(s))\n"
        "  WARNING  tone: a long mission\n"
        "  CRITICAL schema: missing key 'name' (at name, line 2, column 1)"
    )
    passed = LintReport("soul_v1.yaml", (warn,), v1)
    assert passed.ok
    assert passed.render().splitlines()[0] == "soul_v1.yaml: OK (0 critical, 1 warning(s))"
    assert not LintReport("soul_v1.yaml", (crit,), v1).ok  # parsed, but a check failed
    assert not LintReport("empty.yaml", (), None).ok  # nothing parsed


def test_a_rejected_soul_names_its_first_critical_finding_and_how_many_more() -> None:
    first = Finding("schema", CRIT, "missing key 'name'", path="name")
    second = Finding("schema", CRIT, "missing key 'version'", path="version")
    warn = Finding("tone", WARN, "long")
    one = SoulRejected(LintReport("v2.yaml", (warn, first)))
    assert str(one) == "v2.yaml rejected: schema: missing key 'name' (at name)"
    three = SoulRejected(LintReport("v2.yaml", (first, second, second)))
    assert str(three) == "v2.yaml rejected: schema: missing key 'name' (at name) (+2 more)"
    assert three.report.critical == (first, second, second)
    assert str(SoulRejected(LintReport("v2.yaml", (warn,)))) == "v2.yaml rejected: failed lint"


def test_a_report_is_its_findings_not_the_soul_it_parsed(v1: Soul) -> None:
    """Two lints of the same text agree whatever object came out, and a report in a log line
    does not spill the whole soul."""
    assert LintReport("soul_v1.yaml", (), v1) == LintReport("soul_v1.yaml", (), None)
    assert repr(LintReport("soul_v1.yaml", (), v1)) == (
        "LintReport(source='soul_v1.yaml', findings=())"
    )
