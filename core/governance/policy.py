"""The policy engine: allow, deny (with the rule and safer alternatives) or needs-approval.

The decision itself is core/governance/deciding.py's pure `decide`; the engine gathers what
it reads (the active Soul, Crusader mode, the clock, the tool's tier), keeps the Soul's
rulings on recent actions and issues capability tokens."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import replace

from core.governance.deciding import (
    RuleKey,
    Ruling,
    crusader_approves,
    rule,
    rule_key,
    settle,
)
from core.governance.decision import Decision, DecisionInputs, Verdict, soul_digest
from core.tools.action import ToolAction
from core.tools.capability import CapabilityTokens
from soul import Action, Soul, Tier

__all__ = ["Decision", "DecisionInputs", "PolicyEngine", "Verdict"]

CACHE_SIZE = 4096


class PolicyEngine:
    """Decides about actions under the active Soul. The Soul's rulings are cached."""

    def __init__(
        self,
        soul: Callable[[], Soul],
        capabilities: CapabilityTokens,
        crusader: Callable[[], bool] = lambda: False,
        tiers: Callable[[str], Tier | None] = lambda _: None,
        clock: Callable[[], float] = time.time,
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
        self._clock = clock
        self._digest: tuple[Soul, str] | None = None
        self._rulings: OrderedDict[tuple[str, RuleKey], Ruling] = OrderedDict()

    def judge(
        self,
        action: ToolAction,
        *,
        autonomous: bool = False,
        ask: str | None = None,
        flow: Iterable[str] = (),
        effects: Iterable[str] | None = None,
        command: ToolAction | None = None,
    ) -> tuple[Decision, DecisionInputs]:
        """Decide about one exact action, and say what the decision read (for its receipt).

        `ask`: why the owner must decide whatever the Soul's tier says (what the request
        read: `flow`, its labels). `effects`: judge applying a dry run of `command` that
        showed these effect kinds (`action` is then the apply action). An allowed decision
        carries a fresh capability token for `action`."""
        soul = self._soul()
        facts = _facts(command if command is not None else action)
        inputs = DecisionInputs(
            facts,
            soul.version,
            self._digest_of(soul),
            self._clock(),
            autonomous=autonomous,
            crusader=self._crusader(),
            tool_tier=self._tiers(facts.capability),
            chosen_tier=self._chosen(facts.capability),
            effects=None if effects is None else tuple(effects),
            ask=ask,
            flow=tuple(sorted(str(label) for label in flow)),
        )
        decision = settle(soul, inputs, self._ruling(soul, inputs))
        if decision.verdict is Verdict.ALLOW:
            return replace(decision, capability=self._capabilities.issue(action.digest)), inputs
        return decision, inputs

    def decide(self, action: ToolAction, *, autonomous: bool = False) -> Decision:
        """Decide about one exact action. Allowed decisions carry a fresh capability token."""
        return self.judge(action, autonomous=autonomous)[0]

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
        found = self.judge(action, effects=kinds, command=command, autonomous=autonomous)
        return found[0]

    def _ruling(self, soul: Soul, inputs: DecisionInputs) -> Ruling:
        """The Soul's ruling on the action's facts, kept for the next equal action (it
        depends on nothing else: core/governance/deciding.py)."""
        key = (inputs.soul_digest, rule_key(inputs))
        found = self._rulings.get(key)
        if found is None:
            found = self._rulings[key] = rule(soul, inputs)
            if len(self._rulings) > CACHE_SIZE:
                self._rulings.popitem(last=False)
        else:
            self._rulings.move_to_end(key)
        return found

    def _digest_of(self, soul: Soul) -> str:
        """The Soul's digest, computed once per Soul object."""
        if self._digest is None or self._digest[0] is not soul:
            self._digest = (soul, soul_digest(soul))
        return self._digest[1]

    def authorize_inert(self, action: ToolAction) -> str:
        """The capability for running `action` where it cannot change anything (a dry run
        against a copy of the workspace): refused only by the denylist."""
        self._refuse_denied(action)
        return self._capabilities.issue(action.digest)

    def authorize_approved(self, action: ToolAction) -> str:
        """The capability for an action the owner approved (checked again against the denylist),
        marked as approved: the sandbox shows the sensitive files such an action names."""
        self._refuse_denied(action)
        return self._capabilities.issue(action.digest, approved=True)

    def _refuse_denied(self, action: ToolAction) -> None:
        """PermissionError when the Soul refuses `action` outright."""
        soul = self._soul()
        facts = _facts(action)
        inputs = DecisionInputs(
            facts,
            soul.version,
            self._digest_of(soul),
            0.0,
            tool_tier=self._tiers(facts.capability),
            chosen_tier=self._chosen(facts.capability),
        )
        ruling = self._ruling(soul, inputs)
        if isinstance(ruling, Decision) and ruling.verdict is Verdict.DENY:
            raise PermissionError(ruling.reason)

    def crusader_approves(self, tier: str, kinds: Iterable[str] = ()) -> bool:
        """Whether Crusader mode, on right now, lets work of this tier and these kinds run
        without a card (scheduled T2 work, by the shipped Soul)."""
        return crusader_approves(self._soul(), self._crusader(), tier, kinds)


def _facts(action: ToolAction) -> Action:
    """What the Soul's rules are matched against."""
    return Action(
        capability=action.capability,
        command=action.command,
        method=action.params.get("method"),
        in_workspace=action.params.get("in_workspace"),
        overwrites=action.params.get("overwrites"),
    )
