"""What a digest reports, read from the ledger (and asked of the approvals and the scheduler)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from core.governance.approvals import ApprovalState, ApprovalStore
from core.receipts.base import Checkpoint, ReceiptQuery, ReceiptStore, VerifyReport
from core.receipts.kinds import KindRegistry, Role, Section
from core.receipts.model import StoredReceipt
from core.receipts.registry import KINDS
from core.scheduler.job import QUIET_NOTE
from core.scheduler.model import RunRecord

PAGE = 500
MAX_RECEIPTS = 20_000  # per kind read for one digest; a busier day is reported as "20000+"


def ledger_time(ts: float) -> str:
    """Epoch seconds in the ledger's timestamp format (sortable as text)."""
    text = datetime.fromtimestamp(ts, UTC).isoformat(timespec="microseconds")
    return text.replace("+00:00", "Z")


@dataclass
class DigestData:
    """The numbers and lines one digest card shows."""

    since: float
    until: float
    actions_by_tier: Counter[str] = field(default_factory=Counter)
    approvals_decided: Counter[str] = field(default_factory=Counter)
    approvals_pending: int = 0
    failures: list[str] = field(default_factory=list)
    health: list[tuple[str, str]] = field(default_factory=list)  # (ledger time, transition)
    jobs: Counter[str] = field(default_factory=Counter)
    misses: list[tuple[str, str]] = field(default_factory=list)  # (job, ledger time)
    tokens: int = 0
    cost_usd: float = 0.0
    verify: VerifyReport | None = None
    checkpoint: Checkpoint | None = None  # signed as the digest was made: its fingerprint


async def receipts_between(
    ledger: ReceiptStore, since: float, until: float, **filters: str
) -> list[StoredReceipt]:
    """Receipts of one action type or status in [since, until), newest first."""
    low, high = ledger_time(since), ledger_time(until)
    found: list[StoredReceipt] = []
    before: int | None = None
    while len(found) < MAX_RECEIPTS:
        page = await ledger.page(ReceiptQuery(**filters, before_seq=before, limit=PAGE))
        for receipt in page.receipts:
            if receipt.timestamp < low:
                return found
            if receipt.timestamp < high:
                found.append(receipt)
        if page.next_before_seq is None:
            return found
        before = page.next_before_seq
    return found


def _meta(receipt: StoredReceipt) -> dict[str, object]:
    try:
        value = json.loads(receipt.metadata or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


async def collect(
    ledger: ReceiptStore,
    approvals: ApprovalStore | None,
    since: float,
    until: float,
    runs: Iterable[RunRecord] = (),
    kinds: KindRegistry = KINDS,
) -> DigestData:
    """Everything the digest covers for [since, until); `runs` (the scheduler's history for
    the period) adds the quiet runs, which have no receipt. `approvals` is None when
    governance is off (nothing can be pending). What each receipt counts as is its kind's
    role or section in `kinds`."""
    await ledger.flush()
    data = DigestData(since, until)
    for kind in kinds.having(Role.EFFECT):
        for run in await receipts_between(ledger, since, until, action_type=kind):
            data.actions_by_tier[str(_meta(run).get("tier") or "?")] += 1
    for kind in kinds.having(Role.DECISION):
        verdict = kinds.get(kind).verdict
        count = len(await receipts_between(ledger, since, until, action_type=kind))
        if verdict and count:
            data.approvals_decided[verdict] += count
    if approvals is not None:
        data.approvals_pending = await approvals.count(ApprovalState.PENDING)
    await _failures_and_health(ledger, since, until, data, kinds)
    await _jobs(ledger, since, until, data, kinds)
    for quiet in runs:
        if quiet.outcome == "ok" and (quiet.detail or "").endswith(QUIET_NOTE):
            data.jobs[f"{quiet.job} ok"] += 1
    for kind in kinds.in_section(Section.USAGE):
        for decision in await receipts_between(ledger, since, until, action_type=kind):
            data.tokens += decision.token_count or 0
            cost = _meta(decision).get("cost_usd")
            data.cost_usd += float(cost) if isinstance(cost, int | float) else 0.0
    data.verify = await ledger.verify()
    if data.verify.ok:
        # Signed now, so the fingerprint on the card covers everything up to the digest; the
        # chat keeps the card, a witness of the ledger that the machine cannot rewrite.
        data.checkpoint = await ledger.checkpoint()
    return data


async def _failures_and_health(
    ledger: ReceiptStore, since: float, until: float, data: DigestData, kinds: KindRegistry
) -> None:
    """Failures, one line each, but health transitions: those are lines of their own."""
    health = kinds.in_section(Section.HEALTH)
    for failed in await receipts_between(ledger, since, until, status="failure"):
        if failed.action_type in health:
            continue  # reported as health transitions
        reason = (failed.error_message or "")[:80]
        data.failures.append(f"{failed.action_type}/{failed.action_name}: {reason}".rstrip(": "))
    for kind in health:
        for seen in await receipts_between(ledger, since, until, action_type=kind):
            data.health.append((seen.timestamp, kind.removeprefix("health_")))
    data.health.sort()


async def _jobs(
    ledger: ReceiptStore, since: float, until: float, data: DigestData, kinds: KindRegistry
) -> None:
    for kind in kinds.in_section(Section.JOBS):
        for run in await receipts_between(ledger, since, until, action_type=kind):
            meta = _meta(run)
            outcome = str(meta.get("outcome") or kind.removeprefix("scheduled_job_"))
            data.jobs[f"{run.action_name} {outcome}"] += 1
            if outcome == "missed":
                data.misses.append((run.action_name, run.timestamp))
