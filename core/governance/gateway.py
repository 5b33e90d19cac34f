"""The governed gateway: one ToolAction in, one structured outcome out (ran, refused, waited)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace
from enum import StrEnum

from core.governance.approval_service import ApprovalService
from core.governance.approvals import ApprovalState
from core.governance.execution import Executor
from core.governance.policy import Decision, PolicyEngine, Verdict
from core.receipts.base import ReceiptStore
from core.receipts.model import Receipt, ReceiptStatus, StoredReceipt
from core.tools.action import ToolAction


class OutcomeKind(StrEnum):
    """How a governed call ended."""

    RAN = "ran"  # it ran (exit code may still be non-zero)
    DENIED = "denied"  # policy refused it; rule and alternatives say why and what else
    NOT_APPROVED = "not_approved"  # the owner tapped Deny
    EXPIRED = "expired"  # nobody decided in time; nothing ran
    FAILED = "failed"  # governance or the tool refused at run time; nothing useful ran


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """What happened to one governed action; `for_model()` is what the model is told."""

    kind: OutcomeKind
    tier: str
    command: str
    output: str = ""
    exit_code: int | None = None
    receipt_id: str | None = None
    rules: tuple[str, ...] = ()
    reason: str = ""
    alternatives: tuple[str, ...] = ()
    approval_id: str | None = None

    @property
    def succeeded(self) -> bool:
        """It ran and exited 0."""
        return self.kind is OutcomeKind.RAN and self.exit_code == 0

    def for_model(self) -> str:
        """JSON for a TOOL message: only what the model needs (no tokens, no ids it could
        mistake for proof)."""
        body = {k: v for k, v in asdict(self).items() if v not in (None, "", ())}
        body.pop("receipt_id", None)
        body.pop("approval_id", None)
        return json.dumps(body, ensure_ascii=False)


class ToolGateway:
    """Decide, then refuse, ask the owner and wait, or run; every branch leaves receipts."""

    def __init__(
        self,
        policy: PolicyEngine,
        approvals: ApprovalService,
        executor: Executor,
        ledger: ReceiptStore,
    ) -> None:
        self._policy = policy
        self._approvals = approvals
        self._executor = executor
        self._ledger = ledger

    async def run(
        self, action: ToolAction, *, via: str, parent_id: str, quest_id: str
    ) -> ToolOutcome:
        """Run `action` under governance. Waiting for an approval suspends only the caller."""
        decision = self._policy.decide(action)
        self._record(action, decision, parent_id, quest_id, "policy_decision")
        if decision.verdict is Verdict.DENY:
            return ToolOutcome(
                OutcomeKind.DENIED,
                decision.tier,
                action.describe(),
                rules=decision.rules,
                reason=decision.reason,
                alternatives=decision.alternatives,
            )
        if decision.verdict is Verdict.NEEDS_APPROVAL:
            return await self._ask(action, decision, via, quest_id)
        if decision.auto_approved:
            self._record(action, decision, parent_id, quest_id, "crusader_auto_approval")
        await self._executor.execute(
            action,
            decision.tier,
            capability=decision.capability,
            parent_id=parent_id,
            quest_id=quest_id,
        )
        return await self._ran(action, decision.tier, parent_id)

    async def finish(self, quest_id: str) -> str | None:
        """Wait for the quest's background checks; a text when its T1 steps were undone."""
        return await self._executor.finish(quest_id)

    async def _ask(
        self, action: ToolAction, decision: Decision, via: str, quest_id: str
    ) -> ToolOutcome:
        settled = await self._approvals.request_and_wait(action, decision, via, quest_id)
        approval = settled.approval
        base = ToolOutcome(
            OutcomeKind.EXPIRED, decision.tier, action.describe(), approval_id=approval.id
        )
        if approval.state is ApprovalState.DENIED:
            return _with(base, kind=OutcomeKind.NOT_APPROVED, reason="the owner denied it")
        if approval.state is not ApprovalState.EXECUTED or settled.run_parent_id is None:
            reason = f"approval {approval.state.value}; nothing ran"
            return _with(base, reason=reason)
        outcome = await self._ran(action, decision.tier, settled.run_parent_id)
        return _with(outcome, approval_id=approval.id)

    async def _ran(self, action: ToolAction, tier: str, parent_id: str) -> ToolOutcome:
        """Read the run's own receipt: the outcome the model sees is what the ledger says."""
        await self._ledger.flush()
        receipt = _tool_run(await self._ledger.children(parent_id), action)
        if receipt is None:
            return ToolOutcome(OutcomeKind.FAILED, tier, action.describe(), reason="no receipt")
        outputs = receipt.decoded("outputs")
        if not isinstance(outputs, dict):
            return ToolOutcome(
                OutcomeKind.FAILED,
                tier,
                action.describe(),
                receipt_id=receipt.id,
                reason=receipt.error_message or "the tool did not run",
            )
        return ToolOutcome(
            OutcomeKind.RAN,
            tier,
            action.describe(),
            output=str(outputs.get("output", "")),
            exit_code=int(outputs.get("exit_code", 1)),
            receipt_id=receipt.id,
        )

    def _record(
        self, action: ToolAction, decision: Decision, parent_id: str, quest_id: str, kind: str
    ) -> None:
        denied = decision.verdict is Verdict.DENY
        self._ledger.append(
            Receipt(
                action_type=kind,
                action_name=str(decision.verdict),
                inputs={"command": action.describe(), "action_hash": action.digest},
                outputs=decision.snapshot(),
                status=ReceiptStatus.REFUSED if denied else ReceiptStatus.SUCCESS,
                parent_id=parent_id,
                quest_id=quest_id,
                metadata={"tier": decision.tier},
            )
        )


def _tool_run(children: list[StoredReceipt], action: ToolAction) -> StoredReceipt | None:
    """The newest tool_run receipt for exactly this action among `children`."""
    for receipt in reversed(children):
        if receipt.action_type != "tool_run":
            continue
        inputs = receipt.decoded("inputs")
        if isinstance(inputs, dict) and inputs.get("action_hash") == action.digest:
            return receipt
    return None


def _with(outcome: ToolOutcome, **changes: object) -> ToolOutcome:
    return replace(outcome, **changes)  # type: ignore[arg-type]
