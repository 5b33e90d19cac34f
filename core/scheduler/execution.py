"""One run of a job: gates first, then its code, then the outcome in history and receipts."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Protocol

from core.clock import WallClock
from core.errors import LancelotError
from core.receipts.model import Receipt
from core.scheduler.config import JobSpec
from core.scheduler.gates import Gates
from core.scheduler.job import QUIET_NOTE, ApprovalAsker, JobContext, JobRunner, Unchanged
from core.scheduler.model import Outcome
from core.scheduler.receipts import run_receipt
from core.scheduler.store import SchedulerStore

log = logging.getLogger(__name__)


class RunHost(Protocol):
    """What one run needs from the engine that claimed it (the engine is one)."""

    gates: Gates
    store: SchedulerStore
    wall: WallClock
    ask_approval: ApprovalAsker | None

    def record(self, receipt: Receipt) -> None:
        """Append a receipt."""
        ...

    def runner_for(self, spec: JobSpec) -> JobRunner | None:
        """The code registered for `spec`'s target, if any."""
        ...


async def execute(scheduler: RunHost, spec: JobSpec, ctx: JobContext) -> None:
    """Gate, run and record one claimed run. Never raises (but lets cancellation through)."""
    started = time.perf_counter()
    crusader = scheduler.gates.waived(spec, approved=ctx.approved)  # before it can end
    outcome, result, gate = await _outcome(scheduler, spec, ctx)
    duration = (time.perf_counter() - started) * 1000
    detail = result.detail if isinstance(result, Unchanged) else result
    quiet = isinstance(result, Unchanged) and ctx.trigger == "schedule"
    finished = scheduler.wall.time()
    await scheduler.store.finish(
        ctx.run_id, spec.name, finished, outcome, detail + QUIET_NOTE if quiet else detail
    )
    if not quiet:
        by = "crusader" if crusader and gate is None else None
        scheduler.record(
            run_receipt(spec, ctx, outcome, detail, gate, duration_ms=duration, approved_by=by)
        )
    if gate == "owner_approval" and scheduler.ask_approval is not None:
        try:
            await scheduler.ask_approval(spec, ctx)
        except LancelotError as exc:
            log.warning("scheduler: could not ask to approve %s: %s", spec.name, exc)


async def _outcome(
    scheduler: RunHost, spec: JobSpec, ctx: JobContext
) -> tuple[Outcome, str | Unchanged, str | None]:
    refusal = await scheduler.gates.check(spec, approved=ctx.approved)
    if refusal is not None:
        return Outcome.SKIPPED, refusal.reason, refusal.gate
    runner = scheduler.runner_for(spec)
    if runner is None:
        return Outcome.SKIPPED, f"{spec.run} is not available", "unavailable"
    try:
        return Outcome.OK, await runner(ctx), None
    except asyncio.CancelledError:
        raise
    except LancelotError as exc:
        log.warning("scheduler: %s failed: %s", spec.name, exc)
        return Outcome.FAILED, exc.user_message, None
    except Exception as exc:
        log.exception("scheduler: %s crashed", spec.name)
        return Outcome.FAILED, f"{type(exc).__name__}: the details are in the log", None
