"""What a job is to the scheduler: the context a run gets, what its code returns, and the
callables the engine is handed."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from core.scheduler.config import JobSpec


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
