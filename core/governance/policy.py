"""The policy engine: allow, deny (with the rule and safer alternatives) or needs-approval."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from enum import StrEnum

from core.mcp.naming import governing_tier, soul_tier, split_capability
from core.tools.action import ToolAction
from core.tools.capability import CapabilityTokens
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

CACHE_SIZE = 4096


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


class PolicyEngine:
    """Classifies actions against the active Soul and decides. T0 decisions are cached."""

    def __init__(
        self,
        soul: Callable[[], Soul],
        capabilities: CapabilityTokens,
        crusader: Callable[[], bool] = lambda: False,
        tiers: Callable[[str], Tier | None] = lambda _: None,
        chosen: Callable[[str], Tier | None] = lambda _: None,
    ) -> None:
        """`tiers` gives a capability's tier from its tool's definition (core/tools/
        definition.py), for a capability the Soul has no rule for; the Soul's rules win.
        `chosen` gives the tier the owner chose for an MCP tool from /mcp (core/mcp/
        choices.py): over the definition's and the Soul's `risk_rules.mcp`, never below it."""
        self._soul = soul
        self._tiers = tiers
        self._chosen = chosen
        self._capabilities = capabilities
        self._crusader = crusader
        self._cache: OrderedDict[tuple[object, ...], Decision] = OrderedDict()

    def decide(self, action: ToolAction, *, autonomous: bool = False) -> Decision:
        """Decide about one exact action. Allowed decisions carry a fresh capability token."""
        soul = self._soul()
        # A tier the owner chose from /mcp, or a server's new annotations, decide anew.
        chosen, defined = self._chosen(action.capability), self._tiers(action.capability)
        key = (soul.version, action.digest, autonomous, chosen, defined)
        cached = self._cache.get(key)
        if cached is None:
            cached = self._evaluate(soul, action, autonomous)
            if cached.tier == "T0" and cached.verdict is Verdict.ALLOW:
                self._cache[key] = cached
                if len(self._cache) > CACHE_SIZE:
                    self._cache.popitem(last=False)
        if cached.verdict is Verdict.ALLOW:
            return replace(cached, capability=self._capabilities.issue(action.digest))
        return cached

    def judge_effects(
        self,
        action: ToolAction,
        kinds: Iterable[str],
        *,
        command: ToolAction,
        autonomous: bool = False,
    ) -> Decision:
        """Decide about applying a dry run's effects (`action` is the apply action, `kinds`
        the effect set's non-empty categories, `command` the shell command that made them):
        by the stricter of the Soul's effect tiers and its rules for the command (a rule
        the dry run cannot see past, like git-rewrite, is never dropped), then the approval
        rules and Crusader mode, as for any action. The rules read the facts the dry run saw
        (whether anything was overwritten), and a command no rule names adds nothing: its
        effects judge it. An allowed decision carries the apply's capability token; nothing
        is cached (each effect set is new)."""
        soul = self._soul()
        present = tuple(kinds)
        try:
            found = classify_effects(soul, present)
        except ValueError as exc:  # an effect the Soul cannot judge goes to the owner
            found = Classification("T3", ("shell.exec",), ("effects.unknown",))
            reason = str(exc)
        else:
            reason = ""
        found = stricter(found, self._command_rules(soul, command, "overwrites" in present))
        decision = self._ask_or_allow(soul, found, autonomous)
        if reason:
            decision = replace(decision, reason=reason)
        if decision.verdict is Verdict.ALLOW:
            return replace(decision, capability=self._capabilities.issue(action.digest))
        return decision

    @staticmethod
    def _command_rules(soul: Soul, command: ToolAction, overwrites: bool) -> Classification:
        """What the Soul's rules alone say of a dry-run command, with `overwrites` as seen."""
        facts = replace(_facts(command), overwrites=overwrites)
        try:
            return classify(soul, facts, default="T0")
        except UnparseableCommand:  # decide() refuses these first; never waved on here
            return Classification("T3", ("shell.exec",), ("unparseable-command",))

    def authorize_inert(self, action: ToolAction) -> str:
        """The capability for running `action` where it cannot change anything (a dry run
        against a copy of the workspace): refused only by the denylist."""
        decision = self._evaluate(self._soul(), action, autonomous=False)
        if decision.verdict is Verdict.DENY:
            raise PermissionError(decision.reason)
        return self._capabilities.issue(action.digest)

    def must_ask(self, decision: Decision, reason: str) -> Decision:
        """`decision` turned into a T3 approval (what cannot be seen before it happens)."""
        return replace(
            decision,
            verdict=Verdict.NEEDS_APPROVAL,
            tier="T3",
            reason=reason,
            capability=None,
            auto_approved=False,
        )

    def authorize_approved(self, action: ToolAction) -> str:
        """The capability for an action the owner approved (checked again against the denylist),
        marked as approved: the sandbox shows the sensitive files such an action names."""
        decision = self._evaluate(self._soul(), action, autonomous=False)
        if decision.verdict is Verdict.DENY:
            raise PermissionError(decision.reason)
        return self._capabilities.issue(action.digest, approved=True)

    def _evaluate(self, soul: Soul, action: ToolAction, autonomous: bool) -> Decision:
        facts = _facts(action)
        try:
            if action.command is not None:
                rule = denied_by(soul, action.command)
                if rule is not None:
                    return Decision(
                        Verdict.DENY,
                        "T3",
                        (rule.id,),
                        reason=rule.reason,
                        alternatives=tuple(rule.alternatives),
                    )
            found = classify(soul, facts, default=self._unruled(soul, action.capability))
        except UnparseableCommand as exc:
            return Decision(
                Verdict.DENY,
                "T3",
                ("unparseable-command",),
                reason=str(exc),
                alternatives=("Write the command without unbalanced quotes or deep nesting.",),
            )
        if _server_change(action, found.tier):
            return Decision(
                Verdict.NEEDS_APPROVAL, found.tier, found.rule_ids, found.kinds,
                reason=f"{found.tier} action needs your approval: Lancelot cannot undo what "
                "an MCP server does",
            )  # fmt: skip
        return self._ask_or_allow(soul, found, autonomous)

    def _unruled(self, soul: Soul, capability: str) -> Tier | None:
        """The tier of a capability no rule of the Soul names: for an MCP server's tool, the
        Soul's `risk_rules.mcp` entry and the owner's choice over the definition's (core/mcp/
        naming.py, governing_tier); else the definition's (None: the Soul's rules and its
        default tier decide)."""
        if any(rule.capability == capability for rule in soul.risk_rules.rules):
            return None
        defined = self._tiers(capability)
        server_tool = split_capability(capability)
        if server_tool is None:
            return defined
        ruled = soul_tier(soul.risk_rules.mcp, *server_tool)
        if defined is None:  # no server offers the tool now: the Soul's entry, if any
            return ruled
        return governing_tier(ruled, self._chosen(capability), defined)

    def _ask_or_allow(self, soul: Soul, found: Classification, autonomous: bool) -> Decision:
        base = Decision(Verdict.ALLOW, found.tier, found.rule_ids, found.kinds)
        if not needs_approval(soul, found, autonomous=autonomous):
            return base
        if self.crusader_approves(found.tier, found.kinds):
            return replace(base, auto_approved=True, reason="auto-approved in Crusader mode")
        return replace(
            base, verdict=Verdict.NEEDS_APPROVAL, reason=f"{found.tier} action needs your approval"
        )

    def crusader_approves(self, tier: str, kinds: Iterable[str] = ()) -> bool:
        """Whether Crusader mode, on right now, lets work of this tier and these kinds run
        without a card (scheduled T2 work, by the shipped Soul). It never overrides the Soul:
        only the tiers the Soul lists, never T3, never a kind the Soul says must be asked."""
        soul = self._soul()
        return (
            self._crusader()
            and tier in soul.crusader.auto_approve_tiers
            and tier != "T3"
            and not set(kinds) & set(soul.requires_approval)
        )


def _server_change(action: ToolAction, tier: Tier) -> bool:
    """An MCP server's tool at T2 or above: what it does happens on the server, where no
    dry run sees it and no Undo reaches, so the owner is asked (Crusader mode included)."""
    return split_capability(action.capability) is not None and tier_rank(tier) >= 2


def _facts(action: ToolAction) -> Action:
    """What the Soul's rules are matched against."""
    return Action(
        capability=action.capability,
        command=action.command,
        method=action.params.get("method"),
        in_workspace=action.params.get("in_workspace"),
        overwrites=action.params.get("overwrites"),
    )
