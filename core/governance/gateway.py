"""The governed gateway: one ToolAction in, one structured outcome out (ran, refused, waited)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, replace

from core.errors import ToolUnavailable
from core.governance.approval_service import ApprovalService
from core.governance.by_effect import (
    UNSEEN,
    DryRuns,
    apply_action,
    dry_run_receipt,
    failed_text,
    judged_by_effect,
    unchanged_text,
)
from core.governance.decision import INPUTS_KEY, DecisionInputs
from core.governance.execution import Executor
from core.governance.outcomes import OutcomeKind, ToolOutcome, ran, settled
from core.governance.policy import Decision, PolicyEngine, Verdict
from core.receipts.base import ReceiptStore
from core.receipts.model import Receipt, ReceiptStatus
from core.receipts.registry import GovernanceReceipt
from core.tools.action import ToolAction

log = logging.getLogger(__name__)


# A caller's own limit, checked once the policy has decided: an outcome refuses the action
# (a skill asking above its declared risk), None lets it go on.
Limit = Callable[[Decision], "ToolOutcome | None"]


@dataclass(frozen=True, slots=True)
class _Call:
    """Who asked, and how they want to hear back (see ToolGateway.run)."""

    via: str
    parent_id: str
    quest_id: str | None
    autonomous: bool
    wait: bool
    limit: Limit | None
    labels: Mapping[str, object] | None
    asked: Callable[[str], Awaitable[None]] | None = None  # hears a waited-on approval's id
    ask_if_changes: str | None = None  # the flow's reason to ask, should a dry run change files
    key: str | None = None  # the inbound update asking: one approval for it, ever
    flow: tuple[str, ...] = ()  # the request's labels when it asked


class ToolGateway:
    """The one governed path: /run, the agent's tools and skills all act through `run`.

    Decide, then refuse, ask the owner (and wait, or not), or run; every branch leaves
    receipts, and the caller gets a typed outcome built from what the executor reported.
    """

    def __init__(
        self,
        policy: PolicyEngine,
        approvals: ApprovalService,
        executor: Executor,
        ledger: ReceiptStore,
        dry_runs: DryRuns | None = None,
    ) -> None:
        """`dry_runs`: the sandbox's copy-on-write dry runs; without them every shell command
        that is not provably read-only waits for the owner."""
        self._policy = policy
        self._approvals = approvals
        self._executor = executor
        self._ledger = ledger
        self._dry_runs = dry_runs

    async def run(
        self,
        action: ToolAction,
        *,
        via: str,
        parent_id: str,
        quest_id: str | None,
        autonomous: bool = False,
        wait: bool = True,
        limit: Limit | None = None,
        labels: Mapping[str, object] | None = None,
        asked: Callable[[str], Awaitable[None]] | None = None,
        ask: str | None = None,
        ask_if_changes: str | None = None,
        key: str | None = None,
        flow: Iterable[str] = (),
    ) -> ToolOutcome:
        """Run `action` under governance. With `wait`, an approval suspends only the caller
        until it settles; without, the card goes out and the outcome is WAITING. `labels`
        are added to the decision receipt's metadata (which skill asked, ...).

        `ask` (core/governance/flow.py: what the request has read) makes the owner decide
        whatever the Soul's tier says; `ask_if_changes` does so when a dry run shows the
        command would change something.

        `key`: the identity of the inbound update asking (for an agent's step, and which
        step). An update handled again after a crash finds the approval it asked for the
        first time, and neither dry-runs nor asks again; with `wait`, it waits on that one.

        `flow`: the request's labels (what it has read), recorded with the decision."""
        if key is not None:
            again = await self._asked_before(action, key, wait, asked)
            if again is not None:
                return again
        labels_read = tuple(str(label) for label in flow)
        decision, inputs = self._policy.judge(
            action, autonomous=autonomous, ask=ask, flow=labels_read
        )
        call = _Call(
            via, parent_id, quest_id, autonomous, wait, limit, labels, asked, ask_if_changes, key,
            labels_read,
        )  # fmt: skip
        # A flow's reason to ask stands whatever a dry run would show: the owner decides on
        # the command itself (a read has no effect a dry run could put on a card).
        if decision.verdict is not Verdict.DENY and judged_by_effect(action) and ask is None:
            if self._dry_runs is not None and await self._dry_runs.visible():
                try:
                    return await self._by_effect(self._dry_runs, action, call)
                except ToolUnavailable as exc:
                    log.warning("dry run impossible, asking the owner instead: %s", exc)
            decision, inputs = self._policy.judge(
                action, autonomous=autonomous, ask=UNSEEN, flow=labels_read
            )
        return await self._govern(action, (decision, inputs), call)

    async def _govern(
        self, action: ToolAction, judged: tuple[Decision, DecisionInputs], call: _Call
    ) -> ToolOutcome:
        """Refuse, ask or run `action` as the decision says; record the decision (and what
        it read) first."""
        decision, inputs = judged
        via, parent_id, quest_id = call.via, call.parent_id, call.quest_id
        wait, limit, labels = call.wait, call.limit, call.labels
        decided = self._record(
            action,
            decision,
            parent_id,
            quest_id,
            GovernanceReceipt.POLICY_DECISION,
            labels,
            inputs,
        )
        base = ToolOutcome(
            OutcomeKind.DENIED, decision.tier, action.describe(), receipt_ids=(decided,)
        )
        if decision.verdict is Verdict.DENY:
            return replace(
                base,
                rules=decision.rules,
                reason=decision.reason,
                alternatives=decision.alternatives,
            )
        refused = limit(decision) if limit is not None else None
        if refused is not None:
            return replace(refused, receipt_ids=(decided, *refused.receipt_ids))
        if decision.verdict is Verdict.NEEDS_APPROVAL:
            if not wait:
                approval_id = await self._approvals.request(
                    action, decision, via, quest_id, key=call.key
                )
                return replace(base, kind=OutcomeKind.WAITING, approval_id=approval_id)
            return await self._ask(action, decision, call, base)
        if decision.auto_approved:
            self._record(
                action,
                decision,
                parent_id,
                quest_id,
                GovernanceReceipt.CRUSADER_AUTO_APPROVAL,
                labels,
            )
        report = await self._executor.execute(
            action,
            decision.tier,
            capability=decision.capability,
            parent_id=parent_id,
            quest_id=quest_id,
            policy=decision.snapshot(),
        )
        return ran(base, report)

    async def _by_effect(self, dry_runs: DryRuns, action: ToolAction, call: _Call) -> ToolOutcome:
        """Dry-run the command, then govern applying exactly its effects."""
        run = await dry_runs.dry_run(action, self._policy.authorize_inert(action))
        shown = dry_run_receipt(run, call.parent_id, call.quest_id)
        self._ledger.append(shown)
        if run.effects.empty:
            return ToolOutcome(
                OutcomeKind.RAN,
                "T0",
                action.describe(),
                output=run.result.output,
                exit_code=run.result.exit_code,
                receipt_id=shown.id,
                text=unchanged_text(run),
                receipt_ids=(shown.id,),
            )
        if run.result.exit_code != 0:  # a failed command's half-done changes are not kept
            await dry_runs.discard(run.id)
            return ToolOutcome(
                OutcomeKind.RAN,
                "T0",
                action.describe(),
                output=run.result.output,
                exit_code=run.result.exit_code,
                receipt_id=shown.id,
                text=failed_text(run),
                receipt_ids=(shown.id,),
                effects=run.effects.summary,
            )
        apply = apply_action(run)
        judged = self._policy.judge(
            apply,
            effects=run.effects.categories(),
            command=action,
            autonomous=call.autonomous,
            ask=call.ask_if_changes,
            flow=call.flow,
        )
        outcome = await self._govern(apply, judged, call)
        if outcome.kind in (OutcomeKind.DENIED, OutcomeKind.NOT_PERMITTED):
            await dry_runs.discard(run.id)
        applied = outcome.kind is OutcomeKind.RAN
        return replace(
            outcome,
            command=action.describe(),
            effects=run.effects.summary,
            change_id=run.id if applied else None,
            receipt_ids=(shown.id, *outcome.receipt_ids),
        )

    async def finish(self, quest_id: str) -> str | None:
        """Wait for the quest's background checks; a text when its T1 steps were undone."""
        return await self._executor.finish(quest_id)

    async def _asked_before(
        self,
        action: ToolAction,
        key: str,
        wait: bool,
        asked: Callable[[str], Awaitable[None]] | None,
    ) -> ToolOutcome | None:
        """The outcome of the approval `key` asked for before a crash, or None."""
        if not wait:
            known = await self._approvals.asked(key)
            if known is None:
                return None
            return ToolOutcome(OutcomeKind.WAITING, "", action.describe(), approval_id=known)
        settlement = await self._approvals.wait_again(key, asked)
        if settlement is None:
            return None
        base = ToolOutcome(OutcomeKind.DENIED, settlement.approval.tier, action.describe())
        return settled(base, settlement)

    async def _ask(
        self, action: ToolAction, decision: Decision, call: _Call, base: ToolOutcome
    ) -> ToolOutcome:
        settlement = await self._approvals.request_and_wait(
            action, decision, call.via, call.quest_id, call.asked, key=call.key
        )
        return settled(base, settlement)

    def _record(
        self,
        action: ToolAction,
        decision: Decision,
        parent_id: str,
        quest_id: str | None,
        kind: GovernanceReceipt,
        labels: Mapping[str, object] | None,
        inputs: DecisionInputs | None = None,
    ) -> str:
        receipt = decision_receipt(action, decision, kind, inputs)
        receipt = replace(
            receipt,
            parent_id=parent_id,
            quest_id=quest_id,
            metadata={**receipt.metadata, **(labels or {})},
        )
        self._ledger.append(receipt)
        return receipt.id


def decision_receipt(
    action: ToolAction,
    decision: Decision,
    kind: GovernanceReceipt = GovernanceReceipt.POLICY_DECISION,
    inputs: DecisionInputs | None = None,
) -> Receipt:
    """A decision's receipt; `inputs`, what it read, make it one replay can decide again."""
    read = {INPUTS_KEY: inputs.for_receipt()} if inputs is not None else {}
    return Receipt(
        action_type=kind,
        action_name=str(decision.verdict),
        inputs={"command": action.describe(), "action_hash": action.digest, **read},
        outputs=decision.snapshot(),
        status=ReceiptStatus.REFUSED if decision.verdict is Verdict.DENY else ReceiptStatus.SUCCESS,
        metadata={"tier": decision.tier},
    )
