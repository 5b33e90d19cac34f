"""The soul's invariants, checked in code: a soul that breaks a CRITICAL one is never activated."""

from __future__ import annotations

import shlex
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

from soul.document import read_soul
from soul.report import Finding, LintReport, Severity
from soul.schema import DESTRUCTIVE_EFFECTS, Soul, tier_rank

CRITICAL = Severity.CRITICAL
WARNING = Severity.WARNING


def _destructive_requires_approval(soul: Soul) -> Iterator[Finding]:
    """Invariant 1: every destructive action kind, and every T3 rule's kind, needs the owner."""
    check = "destructive-requires-approval"
    needed = set(soul.requires_approval)
    for i, kind in enumerate(soul.destructive_actions):
        if kind not in needed:
            message = f"destructive action {kind!r} is not in requires_approval"
            yield Finding(check, CRITICAL, message, f"destructive_actions[{i}]")
    for i, rule in enumerate(soul.risk_rules.rules):
        kind = rule.kind or rule.capability
        if rule.tier == "T3" and kind not in needed:
            message = f"T3 rule {rule.id!r} has kind {kind!r}, which is not in requires_approval"
            yield Finding(check, CRITICAL, message, f"risk_rules.rules[{i}]")
    effects = soul.risk_rules.effects
    for name in DESTRUCTIVE_EFFECTS:
        if getattr(effects, name) != "T3":
            message = f"the {name} effect destroys what was there: it must be T3"
            yield Finding(check, CRITICAL, message, f"risk_rules.effects.{name}")
    if not soul.destructive_actions:
        yield Finding(check, WARNING, "destructive_actions is empty", "destructive_actions")


def _no_silent_degradation(soul: Soul) -> Iterator[Finding]:
    """Invariant 2: the tone invariants forbid degrading silently."""
    check = "no-silent-degradation"
    if not soul.forbid_silent_degradation:
        message = "forbid_silent_degradation must be true: a fallback is always announced"
        yield Finding(check, CRITICAL, message, "forbid_silent_degradation")
    if not soul.tone_invariants:
        yield Finding(check, WARNING, "tone_invariants is empty", "tone_invariants")


def _no_autonomous_irreversible(soul: Soul) -> Iterator[Finding]:
    """Invariant 3: nothing irreversible happens without the owner, even on a schedule."""
    check = "no-autonomous-irreversible"
    bounds = soul.scheduling_boundaries
    if bounds.allow_autonomous_irreversible:
        message = "allow_autonomous_irreversible must be false"
        yield Finding(
            check, CRITICAL, message, "scheduling_boundaries.allow_autonomous_irreversible"
        )
    if bounds.max_tier_without_approval == "T3":
        message = "max_tier_without_approval must be below T3"
        yield Finding(check, CRITICAL, message, "scheduling_boundaries.max_tier_without_approval")


def _approval_channel(soul: Soul) -> Iterator[Finding]:
    """Invariant 4: an approval can reach the owner somewhere."""
    rules = soul.approval_rules
    if not rules.channels:
        message = "approval_rules.channels names no channel: approvals could never be answered"
        yield Finding("approval-channel", CRITICAL, message, "approval_rules.channels")
    escalation = rules.escalation
    if escalation.action == "remind" and escalation.after_minutes >= rules.timeout_minutes:
        message = "the reminder comes after the approval has already expired"
        yield Finding("approval-channel", WARNING, message, "approval_rules.escalation")


def _memory_ethics(soul: Soul) -> Iterator[Finding]:
    """Invariant 5: memory is governed by at least one rule."""
    if not soul.memory_ethics:
        yield Finding("memory-ethics", WARNING, "memory_ethics has no rule", "memory_ethics")


def _crusader_tiers(soul: Soul) -> Iterator[Finding]:
    """Crusader mode may auto-approve T2 at most: never what is destructive or irreversible."""
    for i, tier in enumerate(soul.crusader.auto_approve_tiers):
        if tier_rank(tier) > 2:
            message = f"crusader mode may auto-approve T2 at most, not {tier}"
            yield Finding("crusader-tiers", CRITICAL, message, f"crusader.auto_approve_tiers[{i}]")


def _flow_rules(soul: Soul) -> Iterator[Finding]:
    """A flow rule switched to `allow` lets whatever the model read steer that flow."""
    rules = soul.flow_rules
    opened = {
        "private_egress": (rules.private_egress == "allow", "private data may leave the machine"),
        "stranger_changes": (
            rules.stranger_changes == "allow",
            "a page or a file may choose what changes",
        ),
        "stranger_memory": (rules.stranger_memory == "allow", "a page may write memory"),
    }
    for name, (allowed, what) in opened.items():
        if allowed:
            message = f"flow_rules.{name} is allow: {what} without asking you"
            yield Finding("flow-rules", WARNING, message, f"flow_rules.{name}")


def _mcp_rules(soul: Soul) -> Iterator[Finding]:
    """`risk_rules.mcp` names servers as mcp.json can (no `.` or `__`), and a `*` below T2
    lets every tool of a server, those that change things too, run without asking."""
    for server, tools in soul.risk_rules.mcp.items():
        place = f"risk_rules.mcp.{server}"
        if not server or "." in server or "__" in server:
            message = f"{server!r} cannot be an MCP server's name (no '.' or '__')"
            yield Finding("mcp-rules", CRITICAL, message, place)
        wildcard = tools.get("*")
        if wildcard is not None and tier_rank(wildcard) < 2:
            message = f"every tool of MCP server {server!r} runs at {wildcard} without asking you"
            yield Finding("mcp-rules", WARNING, message, f"{place}.*")


def _rule_hygiene(soul: Soul) -> Iterator[Finding]:
    """Rule ids are unique (receipts cite them), patterns parse, deny rules offer a way out."""
    risk = soul.risk_rules
    ids = Counter([r.id for r in risk.rules] + [d.id for d in risk.denylist])
    for rule_id, count in sorted(ids.items()):
        if count > 1:
            yield Finding("unique-rule-ids", CRITICAL, f"rule id {rule_id!r} is used {count} times")
    for i, rule in enumerate(risk.rules):
        for j, words in enumerate(rule.match.commands if rule.match else ()):
            try:
                ok = bool(shlex.split(words))
            except ValueError:
                ok = False
            if not ok:
                path = f"risk_rules.rules[{i}].match.commands[{j}]"
                yield Finding("rule-syntax", CRITICAL, f"cannot split {words!r}", path)
    for i, deny in enumerate(risk.denylist):
        if not deny.alternatives:
            message = f"deny rule {deny.id!r} offers no alternative"
            yield Finding("deny-alternatives", WARNING, message, f"risk_rules.denylist[{i}]")


CHECKS: tuple[Callable[[Soul], Iterator[Finding]], ...] = (
    _destructive_requires_approval,
    _no_silent_degradation,
    _no_autonomous_irreversible,
    _approval_channel,
    _memory_ethics,
    _crusader_tiers,
    _flow_rules,
    _mcp_rules,
    _rule_hygiene,
)


def lint(soul: Soul, source: str = "<soul>") -> LintReport:
    """Run every check on a parsed soul."""
    findings = tuple(finding for check in CHECKS for finding in check(soul))
    return LintReport(source, findings, soul)


def lint_text(text: str, source: str = "<text>") -> LintReport:
    """Parse, validate and lint YAML text; syntax and schema errors become CRITICAL findings."""
    reading = read_soul(text)
    if reading.soul is None:
        return LintReport(source, reading.findings)
    report = lint(reading.soul, source)
    return LintReport(source, tuple(map(reading.place, report.findings)), reading.soul)


def lint_file(path: Path) -> LintReport:
    """Lint a soul file (what `lancelot soul lint FILE` shows); an unreadable file is a finding."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        finding = Finding("unreadable", CRITICAL, f"cannot read the file: {reason}")
        return LintReport(str(path), (finding,))
    return lint_text(text, str(path))
