"""The typed receipts a scheduled run leaves: scheduled_job_run, _failed and _skipped."""

from __future__ import annotations

from core.clock import iso
from core.receipts.model import Receipt, ReceiptStatus
from core.scheduler.config import JobSpec
from core.scheduler.job import JobContext
from core.scheduler.model import Outcome

_TYPES = {
    Outcome.OK: ("scheduled_job_run", ReceiptStatus.SUCCESS),
    Outcome.FAILED: ("scheduled_job_failed", ReceiptStatus.FAILURE),
    Outcome.SKIPPED: ("scheduled_job_skipped", ReceiptStatus.SKIPPED),
    Outcome.MISSED: ("scheduled_job_skipped", ReceiptStatus.SKIPPED),
}


def run_receipt(
    spec: JobSpec,
    ctx: JobContext,
    outcome: Outcome,
    detail: str,
    gate: str | None = None,
    *,
    duration_ms: float | None = None,
    approved_by: str | None = None,
) -> Receipt:
    """The receipt for one run's outcome (a skip names the gate that said no; a run that
    went without the owner's tap because Crusader mode was on says approved_by crusader)."""
    action_type, status = _TYPES[outcome]
    return Receipt(
        action_type=action_type,
        action_name=spec.name,
        inputs={
            "run_id": ctx.run_id,
            "scheduled_for": iso(ctx.scheduled_for),
            "trigger": ctx.trigger,
            "target": spec.run,
        },
        outputs={"detail": detail[:1000]} if outcome is not Outcome.FAILED else None,
        status=status,
        duration_ms=duration_ms,
        error_message=detail[:500] if outcome is Outcome.FAILED else None,
        metadata={
            "gate": gate,
            "tier": spec.tier,
            "approved": ctx.approved,
            "outcome": outcome.value,
            **({"approved_by": approved_by} if approved_by else {}),
        },
    )
