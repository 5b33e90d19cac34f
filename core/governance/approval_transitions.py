"""An approval's moves from state to state: each made at most once in the store (a move that
lost a race does nothing) and written as a receipt, with the approved action's one run."""

from __future__ import annotations

from collections.abc import Callable

from core.governance.approvals import Approval, ApprovalState, ApprovalStore
from core.governance.effect_followups import EffectFollowUps
from core.governance.execution import Executor, RunReport
from core.governance.policy import Decision
from core.receipts.base import ReceiptStore
from core.receipts.model import Receipt, ReceiptStatus
from core.receipts.registry import GovernanceReceipt
from core.tools.action import ToolAction


class ApprovalTransitions:
    """Creates, denies, approves, runs, expires and interrupts approvals, with their receipts."""

    def __init__(
        self,
        store: ApprovalStore,
        ledger: ReceiptStore,
        executor: Executor,
        timeout: Callable[[], float],
        clock: Callable[[], float],
        effects: EffectFollowUps | None,
    ) -> None:
        self._store = store
        self._ledger = ledger
        self._executor = executor
        self._timeout = timeout
        self._clock = clock
        self._effects = effects  # dropping a denied or lapsed dry run

    async def create(
        self,
        action: ToolAction,
        decision: Decision,
        via: str,
        quest_id: str | None,
        key: str | None = None,
    ) -> Approval:
        """A new pending approval, its request receipt written durably. `key`: the inbound
        update asking (see ApprovalStore.create)."""
        card_id = f"approval-{action.digest[:12]}-{int(self._clock() * 1000)}"
        approval = await self._store.create(
            action, decision.tier, decision.reason, card_id, via, self._timeout(), quest_id, key=key
        )
        await self._ledger.append_durable(
            Receipt(
                action_type=GovernanceReceipt.APPROVAL_REQUESTED,
                action_name=action.capability,
                inputs={"command": action.describe(), "action_hash": action.digest},
                outputs={"approval_id": approval.id, "expires_at": approval.expires_at},
                status=ReceiptStatus.PENDING,
                quest_id=quest_id,
                metadata={"policy": decision.snapshot(), "via": via},
            )
        )
        return approval

    async def deny(
        self, approval: Approval, at: float, by: str, via: str, what: str, parent_id: str | None
    ) -> bool:
        """Pending -> denied (by the owner's tap, or by a Stop); whether this call moved it."""
        if not await self._decide(approval, ApprovalState.DENIED, at, by, via):
            return False
        self.record(
            approval, GovernanceReceipt.APPROVAL_DENIED, what, ReceiptStatus.SUCCESS, parent_id
        )
        await self._drop(approval)
        return True

    async def approve(
        self, approval: Approval, at: float, by: str, via: str, parent_id: str | None
    ) -> bool:
        """Pending -> approved; whether this call moved it (then run() follows)."""
        if not await self._decide(approval, ApprovalState.APPROVED, at, by, via):
            return False
        self.record(
            approval,
            GovernanceReceipt.APPROVAL_GRANTED,
            f"approved by {by} via {via}",
            ReceiptStatus.SUCCESS,
            parent_id,
        )
        return True

    async def _decide(
        self, approval: Approval, to: ApprovalState, at: float, by: str, via: str
    ) -> bool:
        """The owner's (or a Stop's) decision on a pending approval; whether it moved it."""
        return await self._store.move(
            approval.id, ApprovalState.PENDING, to, decided_at=at, decided_by=by, decided_via=via
        )

    async def run(self, approval_id: str, parent_id: str | None) -> RunReport | None:
        """Approved -> executing (durably) -> executed, or not_run when nothing could start
        it (no provider, refused at run time, an earlier step undone). Never starts twice:
        None when this call did not start it."""
        if not await self._store.move(approval_id, ApprovalState.APPROVED, ApprovalState.EXECUTING):
            return None
        approval = await self._store.get(approval_id)
        assert approval is not None
        if approval.action.digest != approval.action_hash:  # edited since it was approved
            return await self._refuse_changed(approval, parent_id)
        report = await self._executor.execute(
            approval.action,
            approval.tier,
            parent_id=parent_id,
            quest_id=approval.quest_id,
            approval_id=approval.id,
            policy={
                "verdict": "needs_approval",
                "tier": approval.tier,
                "reason": approval.reason,
                "approved_by": approval.decided_by,
                "approved_via": approval.decided_via,
            },
        )
        await self._store.move(
            approval_id,
            ApprovalState.EXECUTING,
            ApprovalState.EXECUTED if report.result is not None else ApprovalState.NOT_RUN,
            finished_at=self._clock(),
            result=report.text,
        )
        return report

    async def _refuse_changed(self, approval: Approval, parent_id: str | None) -> RunReport:
        """Executing -> not_run: the stored action no longer hashes to what the owner
        approved (its row was rewritten after the tap, before the run a restart resumes)."""
        what = "the action changed since it was approved; nothing ran"
        await self._store.move(
            approval.id,
            ApprovalState.EXECUTING,
            ApprovalState.NOT_RUN,
            finished_at=self._clock(),
            result=what,
        )
        receipt = self.record(
            approval, GovernanceReceipt.APPROVAL_REFUSED, what, ReceiptStatus.REFUSED, parent_id
        )
        return RunReport(None, what, receipt, f"Not run: {what}.", refused=True)

    async def expire(self, approval: Approval) -> bool:
        """Pending -> expired; whether this call moved it."""
        if not await self._store.move(
            approval.id, ApprovalState.PENDING, ApprovalState.EXPIRED, decided_at=self._clock()
        ):
            return False
        self.record(
            approval,
            GovernanceReceipt.APPROVAL_EXPIRED,
            "no decision before the deadline",
            ReceiptStatus.SKIPPED,
            None,
        )
        await self._drop(approval)
        return True

    async def interrupt(self, approval: Approval) -> None:
        """Executing when Lancelot stopped -> interrupted: never run again."""
        await self._store.move(
            approval.id,
            ApprovalState.EXECUTING,
            ApprovalState.INTERRUPTED,
            finished_at=self._clock(),
        )
        self.record(
            approval,
            GovernanceReceipt.APPROVAL_INTERRUPTED,
            "was running when Lancelot stopped; not run again",
            ReceiptStatus.FAILURE,
            None,
        )

    def record(
        self, approval: Approval, kind: str, what: str, status: ReceiptStatus, parent_id: str | None
    ) -> str:
        """A receipt of what happened to the approval (a move, a reminder, a refused tap);
        its id."""
        receipt = Receipt(
            action_type=kind,
            action_name=approval.action.capability,
            inputs={"approval_id": approval.id, "command": approval.action.describe()},
            outputs={"outcome": what},
            status=status,
            parent_id=parent_id,
            quest_id=approval.quest_id,
        )
        self._ledger.append(receipt)
        return receipt.id

    async def _drop(self, approval: Approval) -> None:
        """Denied or lapsed: a dry run kept for this approval is discarded (the workspace
        never saw it)."""
        if self._effects is not None and await self._effects.drop(approval):
            self.record(
                approval,
                GovernanceReceipt.DRY_RUN_DISCARDED,
                "its changes were not applied",
                ReceiptStatus.SUCCESS,
                None,
            )
