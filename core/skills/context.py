"""The context a running skill gets: its inputs, outputs and configuration, and governed
actions that go through the policy engine, approvals and the one executor."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from core.governance.approval_service import ApprovalService
from core.governance.execution import Executor
from core.governance.policy import Decision, PolicyEngine, Verdict
from core.receipts.base import ReceiptStore
from core.receipts.model import Receipt, ReceiptStatus
from core.skills.api import ActionOutcome, ActionStatus, SkillFailed, ToolAction
from core.skills.manifest import SkillManifest, check_type, tier_rank
from core.skills.permissions import Permission, capabilities_of, permission_for

_EXIT = re.compile(r"^exit (-?\d+)\n")


class SkillPermissionError(SkillFailed):
    """The skill used something its permissions do not cover."""


@dataclass(frozen=True, slots=True)
class Governance:
    """What governed actions go through. `providers` says which capabilities a tool
    provider handles right now (the rest come back UNAVAILABLE, never half-run)."""

    policy: PolicyEngine
    executor: Executor
    approvals: ApprovalService
    ledger: ReceiptStore
    providers: Callable[[str], bool]


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
        decision = self.governance.policy.decide(action, autonomous=self.autonomous)
        self._record_decision(action, decision)
        if decision.verdict is Verdict.DENY:
            return ActionOutcome(
                ActionStatus.DENIED,
                f"Not allowed (rule {', '.join(decision.rules)}): {decision.reason}",
                decision.tier,
                rule=", ".join(decision.rules),
                alternatives=decision.alternatives,
            )
        if tier_rank(decision.tier) > tier_rank(self.manifest.risk):
            return self._refuse(
                action,
                f"a {decision.tier} action is above the {self.manifest.risk} "
                f"risk {self.skill_name} declares",
                decision.tier,
            )
        if not self.governance.providers(action.capability):
            text = f"No tool provider handles {action.capability} yet, so it did not run."
            return ActionOutcome(ActionStatus.UNAVAILABLE, text, decision.tier)
        if decision.verdict is Verdict.NEEDS_APPROVAL:
            await self.governance.approvals.request(action, decision, self.via, self.quest_id)
            text = f"Waiting for your approval: {action.describe()}"
            return ActionOutcome(ActionStatus.WAITING_APPROVAL, text, decision.tier)
        text = await self.governance.executor.execute(
            action,
            decision.tier,
            capability=decision.capability,
            parent_id=self.run_id,
            quest_id=self.quest_id,
        )
        return _outcome(text, decision.tier)

    def _refuse(self, action: ToolAction, why: str, tier: str = "") -> ActionOutcome:
        self.governance.ledger.append(
            Receipt(
                "skill_action_refused",
                action.capability,
                inputs={"skill": self.skill_name, "command": action.describe()},
                outputs={"reason": why},
                status=ReceiptStatus.REFUSED,
                parent_id=self.run_id,
                quest_id=self.quest_id,
            )
        )
        return ActionOutcome(ActionStatus.NOT_PERMITTED, f"Refused: {why}.", tier)

    def _record_decision(self, action: ToolAction, decision: Decision) -> None:
        refused = decision.verdict is Verdict.DENY
        self.governance.ledger.append(
            Receipt(
                "policy_decision",
                str(decision.verdict),
                inputs={"command": action.describe(), "action_hash": action.digest},
                outputs=decision.snapshot(),
                status=ReceiptStatus.REFUSED if refused else ReceiptStatus.SUCCESS,
                parent_id=self.run_id,
                quest_id=self.quest_id,
                metadata={"tier": decision.tier, "skill": self.skill_name},
            )
        )


def _outcome(text: str, tier: str) -> ActionOutcome:
    """Read the executor's answer ("exit N\\n...", "Refused by governance: ...", ...)."""
    match = _EXIT.match(text + "\n" if "\n" not in text else text)
    if match:
        return ActionOutcome(ActionStatus.DONE, text, tier, exit_code=int(match.group(1)))
    if text.startswith("Refused by governance"):
        return ActionOutcome(ActionStatus.DENIED, text, tier)
    return ActionOutcome(ActionStatus.FAILED, text, tier)
