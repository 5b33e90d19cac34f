"""The policy decision, a pure function: `decide(inputs, soul)` reads nothing else.

It runs in two parts. `rule` is what the Soul's rules say of the action's facts (the
denylist, the risk rules, the tiers of a dry run's effects): the costly part, which
depends only on the Soul, the facts, the tool's tier and the effects, so callers may keep
its answers (the policy engine, what-if). `settle` then decides whether the owner is asked:
the approval rules, autonomy, Crusader mode and a reason to ask that the flow gave.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from core.governance.decision import Decision, DecisionInputs, Verdict
from core.mcp.naming import governing_tier, soul_tier, split_capability
from soul import (
    Action,
    Classification,
    Soul,
    Tier,
    UnparseableCommand,
    classify,
    classify_effects,
    denied_by,
    needs_approval,
    stricter,
    tier_rank,
)

RuleKey = tuple[Action, Tier | None, Tier | None, tuple[str, ...] | None]


@dataclass(frozen=True, slots=True)
class Classified:
    """The action's classification, still to be asked about or allowed."""

    found: Classification
    reason: str = ""  # why it is the worst case (an effect the Soul cannot judge)


# What the Soul's rules say of an action: its classification, or a decision no asking
# changes (refused; an MCP server's change, always asked).
Ruling = Classified | Decision


def rule_key(inputs: DecisionInputs) -> RuleKey:
    """What `rule` reads of `inputs` (with the Soul): equal keys, equal rulings."""
    return (inputs.action, inputs.tool_tier, inputs.chosen_tier, inputs.effects)


def decide(inputs: DecisionInputs, soul: Soul) -> Decision:
    """The decision `inputs` call for under `soul`, reading nothing else (no token issued)."""
    return settle(soul, inputs, rule(soul, inputs))


def rule(soul: Soul, inputs: DecisionInputs) -> Ruling:
    """The Soul's rules on the action's facts (or its dry run's effects)."""
    if inputs.effects is not None:
        return _by_effects(soul, inputs.action, inputs.effects)
    facts = inputs.action
    try:
        if facts.command is not None:
            denied = denied_by(soul, facts.command)
            if denied is not None:
                return _refused(denied.id, denied.reason, denied.alternatives)
        default = _unruled(soul, facts.capability, inputs.tool_tier, inputs.chosen_tier)
        found = classify(soul, facts, default=default)
    except UnparseableCommand as exc:
        hint = ("Write the command without unbalanced quotes or deep nesting.",)
        return _refused("unparseable-command", str(exc), hint)
    if split_capability(facts.capability) is not None and tier_rank(found.tier) >= 2:
        # What an MCP server's tool does at T2 or above happens on the server, where no dry
        # run sees it and no Undo reaches: the owner is asked (Crusader mode included).
        return Decision(
            Verdict.NEEDS_APPROVAL, found.tier, found.rule_ids, found.kinds,
            reason=f"{found.tier} action needs your approval: Lancelot cannot undo what "
            "an MCP server does",
        )  # fmt: skip
    return Classified(found)


def settle(soul: Soul, inputs: DecisionInputs, ruling: Ruling) -> Decision:
    """The decision from a ruling: refused as it is, else asked or allowed as the approval
    rules, autonomy, Crusader mode and the flow's reason to ask say."""
    if isinstance(ruling, Decision):
        decision = ruling
    else:
        decision = _ask_or_allow(soul, ruling.found, inputs)
        if ruling.reason:
            decision = replace(decision, reason=ruling.reason)
    if inputs.ask is not None and decision.verdict is not Verdict.DENY:
        decision = must_ask(decision, inputs.ask)
    return decision


def must_ask(decision: Decision, reason: str) -> Decision:
    """`decision` turned into a T3 approval (what cannot be seen before it happens)."""
    return replace(
        decision,
        verdict=Verdict.NEEDS_APPROVAL,
        tier="T3",
        reason=reason,
        capability=None,
        auto_approved=False,
    )


def crusader_approves(soul: Soul, on: bool, tier: str, kinds: Iterable[str] = ()) -> bool:
    """Whether Crusader mode (`on`) lets work of this tier and these kinds run without a
    card. It never overrides the Soul: only the tiers the Soul lists, never T3, never a
    kind the Soul says must be asked."""
    return (
        on
        and tier in soul.crusader.auto_approve_tiers
        and tier != "T3"
        and not set(kinds) & set(soul.requires_approval)
    )


def _refused(rule_id: str, reason: str, alternatives: Iterable[str]) -> Decision:
    return Decision(Verdict.DENY, "T3", (rule_id,), reason=reason, alternatives=tuple(alternatives))


def _by_effects(soul: Soul, command: Action, present: tuple[str, ...]) -> Ruling:
    """Applying a dry run's effects: the stricter of the Soul's effect tiers and its rules
    for the command, with `overwrites` as the dry run saw it (a rule the dry run cannot see
    past, like git-rewrite, is never dropped; a command no rule names adds nothing)."""
    try:
        found = classify_effects(soul, present)
    except ValueError as exc:  # an effect the Soul cannot judge goes to the owner
        found = Classification("T3", ("shell.exec",), ("effects.unknown",))
        reason = str(exc)
    else:
        reason = ""
    seen = replace(command, overwrites="overwrites" in present)
    try:
        by_rules = classify(soul, seen, default="T0")
    except UnparseableCommand:  # the command's own decision refuses these first
        by_rules = Classification("T3", ("shell.exec",), ("unparseable-command",))
    return Classified(stricter(found, by_rules), reason)


def _unruled(
    soul: Soul, capability: str, declared: Tier | None, chosen: Tier | None
) -> Tier | None:
    """The tier of a capability no rule of the Soul names: for an MCP server's tool, the
    Soul's `risk_rules.mcp` entry and the owner's choice from /mcp over the declared tier
    (core/mcp/naming.py, governing_tier); else the tool's declared tier (None: the Soul's
    rules and its default tier decide)."""
    if any(rule.capability == capability for rule in soul.risk_rules.rules):
        return None
    server_tool = split_capability(capability)
    if server_tool is None:
        return declared
    ruled = soul_tier(soul.risk_rules.mcp, *server_tool)
    if declared is None:  # no server offers the tool now: the Soul's entry, if any
        return ruled
    return governing_tier(ruled, chosen, declared)


def _ask_or_allow(soul: Soul, found: Classification, inputs: DecisionInputs) -> Decision:
    base = Decision(Verdict.ALLOW, found.tier, found.rule_ids, found.kinds)
    if not needs_approval(soul, found, autonomous=inputs.autonomous):
        return base
    if crusader_approves(soul, inputs.crusader, found.tier, found.kinds):
        return replace(base, auto_approved=True, reason="auto-approved in Crusader mode")
    return replace(
        base, verdict=Verdict.NEEDS_APPROVAL, reason=f"{found.tier} action needs your approval"
    )
