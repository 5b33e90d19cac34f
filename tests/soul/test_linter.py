"""The five invariants, and YAML/schema problems reported as located findings."""

from __future__ import annotations

from pathlib import Path

import pytest

from soul import SHIPPED_VERSIONS_DIR, LintReport, Severity, lint, lint_file, lint_text
from tests.soul.texts import edit, line_of


def checks(report: LintReport, severity: Severity) -> set[str]:
    return {f.check for f in report.findings if f.severity is severity}


def test_shipped_v1_passes_with_no_findings() -> None:
    report = lint_file(SHIPPED_VERSIONS_DIR / "soul_v1.yaml")
    assert report.ok, report.render()
    assert report.findings == ()
    assert report.soul is not None
    assert report.soul.version == 1


@pytest.mark.parametrize(
    ("old", "new", "check"),
    [
        # 1. a destructive action the owner is never asked about
        (
            "destructive_actions:\n",
            "destructive_actions:\n  - disk.wipe\n",
            "destructive-requires-approval",
        ),
        # 1. a T3 rule whose kind no longer needs approval
        ("kind: repo.push", "kind: repo.sync", "destructive-requires-approval"),
        # 1. history lost, or a ref broken, without asking
        ("git_history_lost: T3", "git_history_lost: T2", "destructive-requires-approval"),
        ("git_refs_broken: T3", "git_refs_broken: T1", "destructive-requires-approval"),
        # 2. silent degradation allowed
        (
            "forbid_silent_degradation: true",
            "forbid_silent_degradation: false",
            "no-silent-degradation",
        ),
        # 3. irreversible work on a schedule
        (
            "allow_autonomous_irreversible: false",
            "allow_autonomous_irreversible: true",
            "no-autonomous-irreversible",
        ),
        (
            "max_tier_without_approval: T1",
            "max_tier_without_approval: T3",
            "no-autonomous-irreversible",
        ),
        # 4. approvals that can reach nobody
        ("channels: [telegram, gchat, console]", "channels: []", "approval-channel"),
        # crusader mode may not auto-approve above T2
        ("auto_approve_tiers: [T1, T2]", "auto_approve_tiers: [T1, T2, T3]", "crusader-tiers"),
        # rule ids are cited by receipts, so they must be unique
        ("- id: git-read-only", "- id: shell-read-only", "unique-rule-ids"),
        # an MCP rule for a server mcp.json could never name
        ("  effects:\n", "  mcp:\n    a__b: {git_log: T0}\n  effects:\n", "mcp-rules"),
    ],
)
def test_breaking_an_invariant_is_critical(v1_text: str, old: str, new: str, check: str) -> None:
    report = lint_text(edit(v1_text, old, new), "broken.yaml")
    assert not report.ok
    assert check in checks(report, Severity.CRITICAL)
    assert report.soul is not None  # it parsed; the soul itself is what is wrong


def test_empty_memory_ethics_is_only_a_warning(v1_text: str) -> None:
    start = v1_text.index("memory_ethics:\n")
    end = v1_text.index("\nscheduling_boundaries:")
    text = v1_text[:start] + "memory_ethics: []\n" + v1_text[end:]
    report = lint_text(text)
    assert report.ok
    assert checks(report, Severity.WARNING) == {"memory-ethics"}
    assert checks(report, Severity.CRITICAL) == set()


def test_an_mcp_server_let_run_unasked_is_a_warning(v1_text: str) -> None:
    text = edit(v1_text, "  effects:\n", '  mcp:\n    git: {git_log: T0, "*": T1}\n  effects:\n')
    report = lint_text(text)
    assert report.ok
    (finding,) = report.findings
    assert finding.check == "mcp-rules"
    assert finding.severity is Severity.WARNING
    assert finding.message == "every tool of MCP server 'git' runs at T1 without asking you"
    assert report.soul is not None
    assert report.soul.risk_rules.mcp == {"git": {"git_log": "T0", "*": "T1"}}


def test_semantic_findings_point_at_the_line(v1_text: str) -> None:
    text = edit(v1_text, "forbid_silent_degradation: true", "forbid_silent_degradation: false")
    (finding,) = lint_text(text).critical
    assert finding.path == "forbid_silent_degradation"
    assert finding.line == line_of(text, "forbid_silent_degradation: false")


def test_yaml_syntax_error_is_a_finding_with_a_position(v1_text: str) -> None:
    text = edit(v1_text, "  timeout_minutes: 30", "  timeout_minutes: [30")
    report = lint_text(text, "bad.yaml")
    assert not report.ok
    assert report.soul is None
    (finding,) = report.findings
    assert finding.check == "yaml-syntax"
    assert finding.severity is Severity.CRITICAL
    assert finding.line is not None
    assert finding.column is not None
    assert finding.line >= line_of(text, "timeout_minutes: [30")


def test_unknown_key_is_named_with_its_path_and_line(v1_text: str) -> None:
    text = edit(v1_text, "name: Lancelot\n", "name: Lancelot\nmood: cheerful\n")
    (finding,) = lint_text(text).findings
    assert (finding.check, finding.severity) == ("schema", Severity.CRITICAL)
    assert "unknown key 'mood'" in finding.message
    assert finding.path == "mood"
    assert finding.line == line_of(text, "mood: cheerful")


def test_nested_unknown_key_and_wrong_type_are_both_reported(v1_text: str) -> None:
    soul = lint_text(v1_text).soul
    assert soul is not None
    index = [r.id for r in soul.risk_rules.rules].index("shell-redirect-write")
    args = '        args: [">", ">>", ">|", "&>", "&>>"]\n'
    text = edit(v1_text, "  timeout_minutes: 30", "  timeout_minutes: soon")
    text = edit(text, args, args + "        when: always\n")
    findings = {f.path: f for f in lint_text(text).findings}
    nested = f"risk_rules.rules[{index}].match.when"
    assert set(findings) == {"approval_rules.timeout_minutes", nested}
    wrong_type = findings["approval_rules.timeout_minutes"]
    assert "'soon'" in wrong_type.message
    assert wrong_type.line == line_of(text, "timeout_minutes: soon")
    assert findings[nested].line == line_of(text, "when: always")


def test_wrong_literal_and_missing_key(v1_text: str) -> None:
    text = edit(v1_text, "  level: guided", "  level: reckless")
    text = edit(text, "version: 1\n", "")
    findings = {f.path: f.message for f in lint_text(text).findings}
    assert "autonomy_posture.level" in findings
    assert findings["version"] == "missing key 'version'"


def test_duplicate_key_is_refused_not_resolved(v1_text: str) -> None:
    text = edit(
        v1_text,
        "  allow_autonomous_irreversible: false\n",
        "  allow_autonomous_irreversible: false\n  allow_autonomous_irreversible: true\n",
    )
    (finding,) = lint_text(text).findings
    assert finding.check == "duplicate-key"
    assert finding.line == line_of(text, "allow_autonomous_irreversible: true")


@pytest.mark.parametrize("text", ["", "# only a comment\n", "- a\n- b\n", "just words"])
def test_documents_that_are_not_mappings(text: str) -> None:
    report = lint_text(text)
    assert not report.ok
    assert [f.check for f in report.findings] == ["schema"]


def test_multiple_documents_are_a_syntax_finding(v1_text: str) -> None:
    report = lint_text(v1_text + "\n---\nversion: 2\n")
    assert [f.check for f in report.findings] == ["yaml-syntax"]


def test_lint_file_reports_an_unreadable_file(tmp_path: Path) -> None:
    report = lint_file(tmp_path / "nope.yaml")
    assert not report.ok
    assert report.findings[0].check == "unreadable"
    assert report.source.endswith("nope.yaml")


def test_render_is_readable(v1_text: str) -> None:
    text = edit(v1_text, "channels: [telegram, gchat, console]", "channels: []")
    rendered = lint_text(text, "soul_v9.yaml").render()
    first, *rest = rendered.splitlines()
    assert first == "soul_v9.yaml: REJECTED (1 critical, 0 warning(s))"
    assert rest[0].split()[:2] == ["CRITICAL", "approval-channel:"]
    assert "line " in rest[0]
    assert lint_text(v1_text, "v1").render() == "v1: OK (0 critical, 0 warning(s))"


def test_aliases_are_refused_before_they_can_expand() -> None:
    laughs = "a: &a [x, x, x, x, x, x, x, x]\n" + "".join(
        f"{n}: &{n} [{', '.join([f'*{p}'] * 8)}]\n"
        for p, n in zip("abcdefgh", "bcdefghi", strict=True)
    )
    (finding,) = lint_text(laughs).findings
    assert finding.check == "yaml-syntax"
    assert "aliases" in finding.message


def test_an_oversized_text_is_refused_unread() -> None:
    (finding,) = lint_text("#" * 300_000).findings
    assert finding.check == "too-large"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("private_egress: ask", "private_egress: allow"),
        ("stranger_changes: ask", "stranger_changes: allow"),
        ("stranger_memory: quarantine", "stranger_memory: allow"),
    ],
)
def test_a_flow_rule_opened_to_allow_is_a_warning(v1_text: str, old: str, new: str) -> None:
    report = lint_text(edit(v1_text, old, new))
    assert report.ok  # the owner may choose it
    [finding] = [f for f in report.findings if f.check == "flow-rules"]
    assert finding.severity is Severity.WARNING
    assert finding.path == f"flow_rules.{old.split(':')[0]}"


def test_a_flow_rule_with_an_unknown_value_is_refused(v1_text: str) -> None:
    report = lint_text(edit(v1_text, "private_egress: ask", "private_egress: sometimes"))
    assert not report.ok


SHIPPED = lint_file(SHIPPED_VERSIONS_DIR / "soul_v1.yaml").soul
assert SHIPPED is not None
RULES = {r.id: i for i, r in enumerate(SHIPPED.risk_rules.rules)}
DENIED = {d.id: i for i, d in enumerate(SHIPPED.risk_rules.denylist)}
CRITICAL, WARNING = Severity.CRITICAL, Severity.WARNING
Said = tuple[str, Severity, str, str | None]


def said(text: str) -> list[Said]:
    """What `lancelot soul lint` says of the text: check, severity, words and where."""
    return [(f.check, f.severity, f.message, f.path) for f in lint_text(text).findings]


def emptied(text: str, key: str, following: str) -> str:
    """`text` with the list under top-level `key` (up to `following`) emptied."""
    start, end = text.index(f"\n{key}:\n") + 1, text.index(f"\n{following}:")
    return text[:start] + f"{key}: []\n" + text[end:]


@pytest.mark.parametrize(
    ("old", "new", "findings"),
    [
        (
            "destructive_actions:\n",
            "destructive_actions:\n  - disk.wipe\n",
            [("destructive-requires-approval", CRITICAL,
              "destructive action 'disk.wipe' is not in requires_approval",
              "destructive_actions[0]")],
        ),
        (
            "kind: repo.push",
            "kind: repo.sync",
            [("destructive-requires-approval", CRITICAL,
              "T3 rule 'git-push' has kind 'repo.sync', which is not in requires_approval",
              f"risk_rules.rules[{RULES['git-push']}]")],
        ),
        (  # a rule with no kind counts as its capability
            "  - soul.amend\n\n",
            "\n",
            [("destructive-requires-approval", CRITICAL,
              "T3 rule 'soul-amend' has kind 'soul.amend', which is not in requires_approval",
              f"risk_rules.rules[{RULES['soul-amend']}]")],
        ),
        (
            "git_history_lost: T3",
            "git_history_lost: T2",
            [("destructive-requires-approval", CRITICAL,
              "the git_history_lost effect destroys what was there: it must be T3",
              "risk_rules.effects.git_history_lost")],
        ),
        (
            "forbid_silent_degradation: true",
            "forbid_silent_degradation: false",
            [("no-silent-degradation", CRITICAL,
              "forbid_silent_degradation must be true: a fallback is always announced",
              "forbid_silent_degradation")],
        ),
        (
            "allow_autonomous_irreversible: false",
            "allow_autonomous_irreversible: true",
            [("no-autonomous-irreversible", CRITICAL,
              "allow_autonomous_irreversible must be false",
              "scheduling_boundaries.allow_autonomous_irreversible")],
        ),
        (
            "max_tier_without_approval: T1",
            "max_tier_without_approval: T3",
            [("no-autonomous-irreversible", CRITICAL,
              "max_tier_without_approval must be below T3",
              "scheduling_boundaries.max_tier_without_approval")],
        ),
        ("max_tier_without_approval: T1", "max_tier_without_approval: T2", []),
        (
            "channels: [telegram, gchat, console]",
            "channels: []",
            [("approval-channel", CRITICAL,
              "approval_rules.channels names no channel: approvals could never be answered",
              "approval_rules.channels")],
        ),
        (
            "after_minutes: 20",
            "after_minutes: 30",
            [("approval-channel", WARNING,
              "the reminder comes after the approval has already expired",
              "approval_rules.escalation")],
        ),
        ("after_minutes: 20", "after_minutes: 29", []),
        ("after_minutes: 20\n    action: remind", "after_minutes: 45\n    action: expire", []),
        (
            "auto_approve_tiers: [T1, T2]",
            "auto_approve_tiers: [T1, T3, T2]",
            [("crusader-tiers", CRITICAL,
              "crusader mode may auto-approve T2 at most, not T3",
              "crusader.auto_approve_tiers[1]")],
        ),
        (
            "private_egress: ask",
            "private_egress: allow",
            [("flow-rules", WARNING,
              "flow_rules.private_egress is allow: private data may leave the machine "
              "without asking you", "flow_rules.private_egress")],
        ),
        (
            "stranger_changes: ask",
            "stranger_changes: allow",
            [("flow-rules", WARNING,
              "flow_rules.stranger_changes is allow: a page or a file may choose what "
              "changes without asking you", "flow_rules.stranger_changes")],
        ),
        (
            "stranger_memory: quarantine",
            "stranger_memory: allow",
            [("flow-rules", WARNING,
              "flow_rules.stranger_memory is allow: a page may write memory without asking "
              "you", "flow_rules.stranger_memory")],
        ),
        (
            "  effects:\n",
            "  mcp:\n    a.b: {git_log: T0}\n    git: {\"*\": T2}\n  effects:\n",
            [("mcp-rules", CRITICAL, "'a.b' cannot be an MCP server's name (no '.' or '__')",
              "risk_rules.mcp.a.b")],
        ),
        (
            "- id: git-read-only",
            "- id: shell-read-only",
            [("unique-rule-ids", CRITICAL, "rule id 'shell-read-only' is used 2 times", None)],
        ),
        (
            "- id: deny-mkfs",
            "- id: git-push",
            [("unique-rule-ids", CRITICAL, "rule id 'git-push' is used 2 times", None)],
        ),
        (
            '"git status", "git diff"',
            "\"git 'status\", \"\", \"git diff\"",
            [("rule-syntax", CRITICAL, "cannot split \"git 'status\"",
              f"risk_rules.rules[{RULES['git-read-only']}].match.commands[0]"),
             ("rule-syntax", CRITICAL, "cannot split ''",
              f"risk_rules.rules[{RULES['git-read-only']}].match.commands[1]")],
        ),
        (
            "      alternatives:\n        - Ask the owner to restart the host by hand.\n"
            "        - Restart only the service that needs it, through its own command.\n",
            "",
            [("deny-alternatives", WARNING, "deny rule 'deny-power' offers no alternative",
              f"risk_rules.denylist[{DENIED['deny-power']}]")],
        ),
    ],
)  # fmt: skip
def test_each_finding_says_what_is_wrong_and_where(
    v1_text: str, old: str, new: str, findings: list[Said]
) -> None:
    assert said(edit(v1_text, old, new)) == findings


def test_empty_lists_the_soul_relies_on_are_warned_about(v1_text: str) -> None:
    text = emptied(v1_text, "tone_invariants", "forbid_silent_degradation")
    assert said(text) == [
        ("no-silent-degradation", WARNING, "tone_invariants is empty", "tone_invariants")
    ]
    text = emptied(v1_text, "memory_ethics", "scheduling_boundaries")
    assert said(text) == [("memory-ethics", WARNING, "memory_ethics has no rule", "memory_ethics")]


def test_a_soul_that_names_nothing_destructive_is_warned_about(v1_text: str) -> None:
    text = emptied(v1_text, "destructive_actions", "approval_rules")
    assert said(text) == [
        ("destructive-requires-approval", WARNING, "destructive_actions is empty",
         "destructive_actions")
    ]  # fmt: skip


def test_a_file_that_cannot_be_read_says_why(tmp_path: Path) -> None:
    (finding,) = lint_file(tmp_path / "nope.yaml").findings
    assert (finding.check, finding.severity) == ("unreadable", CRITICAL)
    assert finding.message == "cannot read the file: No such file or directory"
    latin = tmp_path / "latin.yaml"
    latin.write_bytes(b"name: Lancel\xf6t\n")
    (finding,) = lint_file(latin).findings
    assert finding.message.startswith("cannot read the file: 'utf-8' codec can't decode")
    assert lint_file(latin).source == str(latin)


def test_a_text_or_a_soul_with_no_name_is_reported_as_such(v1_text: str) -> None:
    assert lint_text(v1_text).render() == "<text>: OK (0 critical, 0 warning(s))"
    assert SHIPPED is not None
    assert lint(SHIPPED).source == "<soul>"
