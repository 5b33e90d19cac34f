"""What a governed call came to: its kind, what the model and the receipts are told of it,
and how a settled approval or an executor's report turns into one."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace
from enum import StrEnum

from core.governance.approvals import ApprovalState
from core.governance.execution import RunReport
from core.governance.settlement import Settlement


class OutcomeKind(StrEnum):
    """How a governed call ended."""

    RAN = "ran"  # it ran (exit code may still be non-zero)
    DENIED = "denied"  # policy refused it; rule and alternatives say why and what else
    WAITING = "waiting"  # an approval card went out; the caller did not wait for it
    NOT_APPROVED = "not_approved"  # the owner tapped Deny
    EXPIRED = "expired"  # nobody decided in time; nothing ran
    ALREADY_RAN = "already_ran"  # a step asked again: it ran once (receipts hold its result)
    NOT_PERMITTED = "not_permitted"  # the caller's own limits refused it (a skill's risk)
    UNAVAILABLE = "unavailable"  # no tool provider handles it
    FAILED = "failed"  # governance or the tool refused at run time; nothing useful ran


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """What happened to one governed action; `for_model()` is what the model is told.

    `receipt_id` is the run's tool_run receipt; `receipt_ids` every receipt the action left
    (the decision, the run), in order.
    """

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
    text: str = ""  # the owner's view of the run: exit code and output, or why not
    receipt_ids: tuple[str, ...] = ()
    effects: str = ""  # what it changed (or would change) in the workspace, in words
    change_id: str | None = None  # the applied change, which Undo can take back
    recorded: str = ""  # what receipts keep instead of `output` (ToolResult.recorded)

    @property
    def succeeded(self) -> bool:
        """It ran and exited 0."""
        return self.kind is OutcomeKind.RAN and self.exit_code == 0

    def for_model(self) -> str:
        """JSON for a TOOL message: only what the model needs (no tokens, no ids it could
        mistake for proof)."""
        body = {k: v for k, v in asdict(self).items() if v not in (None, "", ())}
        for private in ("receipt_id", "approval_id", "receipt_ids", "text", "change_id"):
            body.pop(private, None)
        body.pop("recorded", None)
        return json.dumps(body, ensure_ascii=False)

    def for_receipt(self) -> dict[str, object]:
        """The model's view for a receipt: the output replaced by the tool's record of it
        when the tool keeps its output out of receipts (a fetched page)."""
        body: dict[str, object] = json.loads(self.for_model())
        if self.recorded:
            body["output"] = self.recorded
        return body


# What a step asked again hears of an approval whose run ended before: it ran, or it was
# approved but nothing could run it.
_ENDED_BEFORE = {
    ApprovalState.EXECUTED: OutcomeKind.ALREADY_RAN,
    ApprovalState.NOT_RUN: OutcomeKind.FAILED,
}


def settled(base: ToolOutcome, settlement: Settlement) -> ToolOutcome:
    """The outcome of an approval that settled: denied, lapsed, or what its run did."""
    approval = settlement.approval
    base = replace(base, kind=OutcomeKind.EXPIRED, approval_id=approval.id)
    if approval.state is ApprovalState.DENIED:
        return replace(base, kind=OutcomeKind.NOT_APPROVED, reason="the owner denied it")
    if approval.state in _ENDED_BEFORE and settlement.report is None:
        # The step asked again (a request redone after a restart): its one run is over.
        kind = _ENDED_BEFORE[approval.state]
        reason = f"approval {approval.state.value} before Lancelot restarted; not run again"
        return replace(base, kind=kind, reason=reason)
    if approval.state not in _ENDED_BEFORE or settlement.report is None:
        return replace(base, reason=f"approval {approval.state.value}; nothing ran")
    return ran(base, settlement.report)


def ran(base: ToolOutcome, report: RunReport) -> ToolOutcome:
    """The outcome of an execution, from the executor's own report."""
    ids = (*base.receipt_ids, report.receipt_id)
    if report.result is None:
        return replace(
            base,
            kind=OutcomeKind.FAILED,
            reason=report.error or "the tool did not run",
            receipt_id=report.receipt_id,
            text=report.text,
            receipt_ids=ids,
        )
    return replace(
        base,
        kind=OutcomeKind.RAN,
        output=report.result.output,
        exit_code=report.result.exit_code,
        receipt_id=report.receipt_id,
        text=report.text,
        receipt_ids=ids,
        recorded=report.result.recorded or "",
        change_id=report.result.change_id,
    )
