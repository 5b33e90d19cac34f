"""The context a running skill gets: its inputs, outputs and configuration, and governed
actions that go through the policy engine, approvals and the one executor."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from core.errors import LancelotError
from core.governance.gateway import ToolGateway
from core.governance.outcomes import OutcomeKind, ToolOutcome
from core.governance.policy import Decision
from core.receipts.base import ReceiptStore
from core.receipts.model import Receipt, ReceiptStatus
from core.receipts.registry import GovernanceReceipt
from core.skills.api import ActionOutcome, ActionStatus, SkillFailed, ToolAction
from core.skills.manifest import SkillManifest, check_type, tier_rank
from core.skills.permissions import Permission, capabilities_of, permission_for


class SkillPermissionError(SkillFailed):
    """The skill used something its permissions do not cover."""


@dataclass(frozen=True, slots=True)
class Governance:
    """What governed actions go through: the one governed path. `providers` says which
    capabilities a tool provider handles right now (the rest come back UNAVAILABLE, never
    half-run)."""

    gateway: ToolGateway
    ledger: ReceiptStore
    providers: Callable[[str], bool]
    # The facts governance judges by (in the workspace? over an existing file?), found by
    # looking, never taken from the skill: a skill cannot vouch for its own action.
    facts: Callable[[ToolAction], ToolAction] = lambda action: action


@dataclass
class GovernedContext:
    """One run's context (implements core.skills.api.SkillContext)."""

    governance: Governance
    manifest: SkillManifest
    permissions: frozenset[Permission]
    inputs: dict[str, Any]
    config: dict[str, Any]
    run_id: str
    quest_id: str | None
    via: str
    autonomous: bool = False
    outputs: dict[str, Any] = field(default_factory=dict)
    actions: list[ActionOutcome] = field(default_factory=list)

    @property
    def skill_name(self) -> str:
        """The running skill's name."""
        return self.manifest.name

    def _need(self, permission: Permission) -> None:
        if permission not in self.permissions:
            raise SkillPermissionError(f"{self.skill_name} lacks the {permission} permission")

    def read_input(self, name: str | None = None) -> Any:
        """One validated input, or all of them."""
        self._need(Permission.READ_INPUT)
        return dict(self.inputs) if name is None else self.inputs.get(name)

    def write_output(self, name: str, value: Any) -> None:
        """Set one output declared in the manifest."""
        self._need(Permission.WRITE_OUTPUT)
        spec = self.manifest.outputs.get(name)
        if spec is None:
            raise SkillFailed(f"{self.skill_name} declares no output named {name!r}")
        check_type(name, spec, value, SkillFailed)
        self.outputs[name] = value

    def read_config(self, name: str, default: Any = None) -> Any:
        """The owner's setting, else the manifest's default, else `default`."""
        self._need(Permission.READ_CONFIG)
        return self.config.get(name, self.manifest.config.get(name, default))

    async def run(self, action: ToolAction) -> ActionOutcome:
        """Permission check, then the policy engine, then refuse, ask or execute."""
        outcome = await self._govern(action)
        self.actions.append(outcome)
        return outcome

    async def _govern(self, action: ToolAction) -> ActionOutcome:
        if action.capability not in capabilities_of(self.permissions):
            needed = permission_for(action.capability)
            why = f"needs the {needed} permission" if needed else "is not a skill capability"
            return self._refuse(
                action, f"{action.capability} {why}, which {self.skill_name} has not been given"
            )
        try:
            action = self.governance.facts(action)
        except LancelotError as exc:  # a path that cannot even be looked at
            return self._refuse(action, str(exc))
        outcome = await self.governance.gateway.run(
            action,
            via=self.via,
            parent_id=self.run_id,
            quest_id=self.quest_id,
            autonomous=self.autonomous,
            wait=False,
            limit=lambda decision: self._limit(action, decision),
            labels={"skill": self.skill_name},
        )
        return _action_outcome(outcome)

    def _limit(self, action: ToolAction, decision: Decision) -> ToolOutcome | None:
        """What a skill may not do even when the policy would allow it."""
        if tier_rank(decision.tier) > tier_rank(self.manifest.risk):
            why = (
                f"a {decision.tier} action is above the {self.manifest.risk} "
                f"risk {self.skill_name} declares"
            )
            refused = self._refuse(action, why, decision.tier)
            return ToolOutcome(
                OutcomeKind.NOT_PERMITTED, decision.tier, action.describe(), reason=refused.text
            )
        if not self.governance.providers(action.capability):
            text = f"No tool provider handles {action.capability} yet, so it did not run."
            return ToolOutcome(
                OutcomeKind.UNAVAILABLE, decision.tier, action.describe(), reason=text
            )
        return None

    def _refuse(self, action: ToolAction, why: str, tier: str = "") -> ActionOutcome:
        self.governance.ledger.append(
            Receipt(
                GovernanceReceipt.SKILL_ACTION_REFUSED,
                action.capability,
                inputs={"skill": self.skill_name, "command": action.describe()},
                outputs={"reason": why},
                status=ReceiptStatus.REFUSED,
                parent_id=self.run_id,
                quest_id=self.quest_id,
            )
        )
        return ActionOutcome(ActionStatus.NOT_PERMITTED, f"Refused: {why}.", tier)


def _action_outcome(outcome: ToolOutcome) -> ActionOutcome:
    """What the skill is told, from the gateway's typed outcome."""
    kind, tier = outcome.kind, outcome.tier
    if kind is OutcomeKind.RAN:
        return ActionOutcome(ActionStatus.DONE, outcome.text, tier, exit_code=outcome.exit_code)
    if kind is OutcomeKind.DENIED:
        return ActionOutcome(
            ActionStatus.DENIED,
            f"Not allowed (rule {', '.join(outcome.rules)}): {outcome.reason}",
            tier,
            rule=", ".join(outcome.rules),
            alternatives=outcome.alternatives,
        )
    if kind is OutcomeKind.WAITING:
        text = f"Waiting for your approval: {outcome.command}"
        return ActionOutcome(ActionStatus.WAITING_APPROVAL, text, tier)
    if kind is OutcomeKind.NOT_PERMITTED:
        return ActionOutcome(ActionStatus.NOT_PERMITTED, outcome.reason, tier)
    if kind is OutcomeKind.UNAVAILABLE:
        return ActionOutcome(ActionStatus.UNAVAILABLE, outcome.reason, tier)
    if outcome.text.startswith("Refused by governance"):
        return ActionOutcome(ActionStatus.DENIED, outcome.text, tier)
    return ActionOutcome(ActionStatus.FAILED, outcome.text or outcome.reason, tier)
