"""A policy decision as a pure function of what it read, so a recorded one can be recomputed.

`decide(inputs, soul)` reads nothing else: the action's facts, the effects a dry run saw,
whether the caller is autonomous, Crusader mode at that moment, the tool's declared tier,
a reason the owner must decide whatever the tier (what the request read, or that no dry run
could show the change), and the Soul. Every policy_decision receipt holds these inputs
(`DecisionInputs.for_receipt`) and the Soul's version and digest, so replay
(core/governance/replay.py) can decide again and compare.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from core.mcp.naming import soul_tier, split_capability
from soul import (
    TIERS,
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

INPUTS_KEY = "decided_from"  # where a policy_decision receipt keeps its inputs


class Verdict(StrEnum):
    """What governance says about an action."""

    ALLOW = "allow"
    DENY = "deny"
    NEEDS_APPROVAL = "needs_approval"


@dataclass(frozen=True, slots=True)
class Decision:
    """The verdict with its reasons. `capability` is set only when the action may run now."""

    verdict: Verdict
    tier: str
    rules: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    reason: str = ""
    alternatives: tuple[str, ...] = ()
    capability: str | None = None
    auto_approved: bool = False

    def snapshot(self) -> dict[str, object]:
        """The decision as recorded in receipts (never the token)."""
        return {
            "verdict": str(self.verdict),
            "tier": self.tier,
            "rules": list(self.rules),
            "kinds": list(self.kinds),
            "reason": self.reason,
            "auto_approved": self.auto_approved,
        }


class InputsError(ValueError):
    """Recorded inputs that cannot be read back (an older or damaged receipt)."""


@dataclass(frozen=True, slots=True)
class DecisionInputs:
    """Everything one decision read besides the Soul itself.

    `effects` is None for an action judged by its own facts; for a shell command judged by
    its dry run, the effect kinds it showed (`action` is then the command's facts). `flow`
    is the request's labels when it was decided (owner, private, stranger); `ask` is what
    they (or an unseen change) made the owner decide, which the Soul cannot lift."""

    action: Action
    soul_version: int
    soul_digest: str
    clock: float
    autonomous: bool = False
    crusader: bool = False
    tool_tier: Tier | None = None
    effects: tuple[str, ...] | None = None
    ask: str | None = None
    flow: tuple[str, ...] = ()

    def for_receipt(self) -> dict[str, object]:
        """The inputs as JSON data for the policy_decision receipt."""
        a = self.action
        return {
            "action": {
                "capability": a.capability,
                "command": a.command,
                "method": a.method,
                "in_workspace": a.in_workspace,
                "overwrites": a.overwrites,
            },
            "soul_version": self.soul_version,
            "soul_digest": self.soul_digest,
            "clock": self.clock,
            "autonomous": self.autonomous,
            "crusader": self.crusader,
            "tool_tier": self.tool_tier,
            "effects": None if self.effects is None else list(self.effects),
            "ask": self.ask,
            "flow": list(self.flow),
        }

    @classmethod
    def from_receipt(cls, data: object) -> DecisionInputs:
        """The inputs a receipt recorded; InputsError names what is missing or malformed."""
        if not isinstance(data, Mapping):
            raise InputsError("the receipt records no decision inputs")
        try:
            return cls(
                action=_action(data["action"]),
                soul_version=_typed(data["soul_version"], int, "soul_version"),
                soul_digest=_typed(data["soul_digest"], str, "soul_digest"),
                clock=float(_typed(data["clock"], (int, float), "clock")),
                autonomous=_typed(data["autonomous"], bool, "autonomous"),
                crusader=_typed(data["crusader"], bool, "crusader"),
                tool_tier=_tier(data["tool_tier"]),
                effects=_strings(data["effects"], "effects"),
                ask=_optional_str(data["ask"], "ask"),
                flow=_strings(data["flow"], "flow") or (),
            )
        except KeyError as exc:
            raise InputsError(f"the recorded inputs lack {exc.args[0]!r}") from None


def soul_digest(soul: Soul) -> str:
    """What identifies a Soul's content (a test's Soul may share a shipped version number)."""
    return hashlib.sha256(soul.model_dump_json().encode("utf-8")).hexdigest()[:16]


def decide(inputs: DecisionInputs, soul: Soul) -> Decision:
    """The decision `inputs` call for under `soul`, reading nothing else (no token issued)."""
    if inputs.effects is None:
        decision = evaluate(soul, inputs)
    else:
        decision = _by_effects(soul, inputs, inputs.effects)
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


def evaluate(soul: Soul, inputs: DecisionInputs) -> Decision:
    """The Soul's decision on an action by its own facts: denylist, rules, then asking."""
    facts = inputs.action
    try:
        if facts.command is not None:
            rule = denied_by(soul, facts.command)
            if rule is not None:
                return Decision(
                    Verdict.DENY,
                    "T3",
                    (rule.id,),
                    reason=rule.reason,
                    alternatives=tuple(rule.alternatives),
                )
        found = classify(soul, facts, default=_unruled(soul, facts.capability, inputs.tool_tier))
    except UnparseableCommand as exc:
        return Decision(
            Verdict.DENY,
            "T3",
            ("unparseable-command",),
            reason=str(exc),
            alternatives=("Write the command without unbalanced quotes or deep nesting.",),
        )
    if _server_change(facts.capability, found.tier):
        return Decision(
            Verdict.NEEDS_APPROVAL, found.tier, found.rule_ids, found.kinds,
            reason=f"{found.tier} action needs your approval: Lancelot cannot undo what "
            "an MCP server does",
        )  # fmt: skip
    return _ask_or_allow(soul, found, inputs)


def _by_effects(soul: Soul, inputs: DecisionInputs, present: tuple[str, ...]) -> Decision:
    """Applying a dry run's effects: the stricter of the Soul's effect tiers and its rules
    for the command (with `overwrites` as the dry run saw it), then asking as for any
    action (see PolicyEngine.judge_effects)."""
    try:
        found = classify_effects(soul, present)
    except ValueError as exc:  # an effect the Soul cannot judge goes to the owner
        found = Classification("T3", ("shell.exec",), ("effects.unknown",))
        reason = str(exc)
    else:
        reason = ""
    found = stricter(found, _command_rules(soul, inputs.action, "overwrites" in present))
    decision = _ask_or_allow(soul, found, inputs)
    return replace(decision, reason=reason) if reason else decision


def _command_rules(soul: Soul, command: Action, overwrites: bool) -> Classification:
    """What the Soul's rules alone say of a dry-run command, with `overwrites` as seen."""
    try:
        return classify(soul, replace(command, overwrites=overwrites), default="T0")
    except UnparseableCommand:  # decide() refuses these first; never waved on here
        return Classification("T3", ("shell.exec",), ("unparseable-command",))


def _unruled(soul: Soul, capability: str, declared: Tier | None) -> Tier | None:
    """The tier of a capability no rule of the Soul names: for an MCP server's tool, the
    Soul's `risk_rules.mcp` entry if it has one; else the tool's declared tier (None: the
    Soul's rules and its default tier decide)."""
    if any(rule.capability == capability for rule in soul.risk_rules.rules):
        return None
    server_tool = split_capability(capability)
    if server_tool is not None:
        chosen = soul_tier(soul.risk_rules.mcp, *server_tool)
        if chosen is not None:
            return chosen
    return declared


def _ask_or_allow(soul: Soul, found: Classification, inputs: DecisionInputs) -> Decision:
    base = Decision(Verdict.ALLOW, found.tier, found.rule_ids, found.kinds)
    if not needs_approval(soul, found, autonomous=inputs.autonomous):
        return base
    if crusader_approves(soul, inputs.crusader, found.tier, found.kinds):
        return replace(base, auto_approved=True, reason="auto-approved in Crusader mode")
    return replace(
        base, verdict=Verdict.NEEDS_APPROVAL, reason=f"{found.tier} action needs your approval"
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


def _server_change(capability: str, tier: Tier) -> bool:
    """An MCP server's tool at T2 or above: what it does happens on the server, where no
    dry run sees it and no Undo reaches, so the owner is asked (Crusader mode included)."""
    return split_capability(capability) is not None and tier_rank(tier) >= 2


def _action(data: object) -> Action:
    if not isinstance(data, Mapping) or not isinstance(data.get("capability"), str):
        raise InputsError("the recorded action has no capability")
    return Action(
        capability=data["capability"],
        command=_optional_str(data.get("command"), "command"),
        method=_optional_str(data.get("method"), "method"),
        in_workspace=_optional_bool(data.get("in_workspace"), "in_workspace"),
        overwrites=_optional_bool(data.get("overwrites"), "overwrites"),
    )


def _typed(value: Any, kind: type | tuple[type, ...], name: str) -> Any:
    """`value` if it is of `kind` (a bool is no int here); else InputsError."""
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise InputsError(f"the recorded {name} is {value!r}")
    return value


def _optional_str(value: object, name: str) -> str | None:
    return None if value is None else _typed(value, str, name)


def _optional_bool(value: object, name: str) -> bool | None:
    return None if value is None else _typed(value, bool, name)


def _tier(value: object) -> Tier | None:
    if value is None:
        return None
    for tier in TIERS:
        if value == tier:
            return tier
    raise InputsError(f"the recorded tool_tier is {value!r}")


def _strings(value: object, name: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise InputsError(f"the recorded {name} is {value!r}")
    return tuple(value)
