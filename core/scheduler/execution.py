"""One run of a job: gates first, then its code, then the outcome in history and receipts."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.errors import LancelotError
from core.scheduler.config import JobSpec
from core.scheduler.receipts import run_receipt
from core.scheduler.store import Outcome

if TYPE_CHECKING:
    from core.scheduler.engine import Scheduler

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class JobContext:
    """What a running job knows: which run this is, and whether the owner approved it.

    Scheduled work is autonomous: a job that acts must ask the policy engine with
    `autonomous=True`, so the Soul's scheduling boundary applies to each action too.
    """

    job: str
    run_id: int
    scheduled_for: float
    trigger: str  # schedule, catch_up, manual, approved
    approved: bool = False
    autonomous: bool = True


QUIET_NOTE = " (unchanged: no receipt)"


@dataclass(frozen=True, slots=True)
class Unchanged:
    """What a job returns when its run found nothing new. A scheduled run that says so is
    kept in scheduler.db's history (its detail ends with QUIET_NOTE; /jobs and the digest
    count it) but leaves no receipt: a minutely sweep would write 1,440 identical ones a
    day. Manual and approved runs, failures and skips always leave their receipt."""

    detail: str


# A job's code: returns a short line for the run's history and receipt.
JobRunner = Callable[[JobContext], Awaitable[str | Unchanged]]
# Called when a gated job's run needs the owner: sends the approval card.
ApprovalAsker = Callable[[JobSpec, JobContext], Awaitable[None]]


async def execute(scheduler: Scheduler, spec: JobSpec, ctx: JobContext) -> None:
    """Gate, run and record one claimed run. Never raises (but lets cancellation through)."""
    started = time.perf_counter()
    outcome, result, gate = await _outcome(scheduler, spec, ctx)
    duration = (time.perf_counter() - started) * 1000
    detail = result.detail if isinstance(result, Unchanged) else result
    quiet = isinstance(result, Unchanged) and ctx.trigger == "schedule"
    finished = scheduler.wall.time()
    await scheduler.store.finish(
        ctx.run_id, spec.name, finished, outcome, detail + QUIET_NOTE if quiet else detail
    )
    if not quiet:
        scheduler.record(run_receipt(spec, ctx, outcome, detail, gate, duration_ms=duration))
    if gate == "owner_approval" and scheduler.ask_approval is not None:
        try:
            await scheduler.ask_approval(spec, ctx)
        except LancelotError as exc:
            log.warning("scheduler: could not ask to approve %s: %s", spec.name, exc)


async def _outcome(
    scheduler: Scheduler, spec: JobSpec, ctx: JobContext
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
