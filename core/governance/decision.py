"""A policy decision and exactly what it read, as recorded in its receipt.

`DecisionInputs` is all a decision reads besides the Soul: the action's facts, the effects
a dry run saw, whether the caller is autonomous, Crusader mode at that moment, the tool's
declared tier, a reason the owner must decide whatever the tier (what the request read, or
that no dry run could show the change). Every policy_decision receipt holds them
(`for_receipt`) with the Soul's version and digest, so replay (core/governance/replay.py)
can decide again (core/governance/deciding.py) and compare.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from soul import TIERS, Action, Soul, Tier

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
    chosen_tier: Tier | None = None  # the owner's choice for an MCP tool, from /mcp

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
            "chosen_tier": self.chosen_tier,
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
                tool_tier=_tier(data["tool_tier"], "tool_tier"),
                effects=_strings(data["effects"], "effects"),
                ask=_optional_str(data["ask"], "ask"),
                flow=_strings(data["flow"], "flow") or (),
                # absent from a receipt recorded before /mcp tiers
                chosen_tier=_tier(data.get("chosen_tier"), "chosen_tier"),
            )
        except KeyError as exc:
            raise InputsError(f"the recorded inputs lack {exc.args[0]!r}") from None


def soul_digest(soul: Soul) -> str:
    """What identifies a Soul's content (a test's Soul may share a shipped version number)."""
    return hashlib.sha256(soul.model_dump_json().encode("utf-8")).hexdigest()[:16]


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


def _tier(value: object, name: str) -> Tier | None:
    if value is None:
        return None
    for tier in TIERS:
        if value == tier:
            return tier
    raise InputsError(f"the recorded {name} is {value!r}")


def _strings(value: object, name: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise InputsError(f"the recorded {name} is {value!r}")
    return tuple(value)
