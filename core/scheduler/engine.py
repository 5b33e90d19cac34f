"""The scheduler: claims each due run once in scheduler.db, passes it through the gates, runs
it, and leaves a typed receipt (scheduled_job_run / _failed / _skipped).

Timing comes from one APScheduler AsyncIOScheduler on Lancelot's loop, armed with each job's
next run as stored; scheduler.db stays the single source of truth, so a restart re-arms from
it. With a controlled clock (tests) the timer is off and `run_pending()` drives the runs.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable
from types import TracebackType
from typing import Self

from apscheduler.triggers.base import BaseTrigger

from core.clock import WallClock
from core.receipts.model import Receipt
from core.runtime.tasks import Supervisor
from core.scheduler.config import JobSpec
from core.scheduler.execution import execute
from core.scheduler.gates import Gates
from core.scheduler.job import ApprovalAsker, JobContext, JobRunner
from core.scheduler.model import JobState, Outcome
from core.scheduler.receipts import run_receipt
from core.scheduler.store import SchedulerStore
from core.scheduler.timer import Timer
from core.scheduler.triggers import missed_between, next_after, trigger_for

log = logging.getLogger(__name__)

OVERDUE_AFTER = 60.0  # seconds a due run may wait unclaimed before health says "not ticking"
HEARTBEAT = 10.0  # seconds between the timer's own checks
STOP_GRACE = 10.0  # seconds a stop waits for runs in progress before cancelling them


class Scheduler:
    """Runs the declared jobs; see the module docstring."""

    def __init__(
        self,
        specs: tuple[JobSpec, ...],
        store: SchedulerStore,
        ledger_append: Callable[[Receipt], None],
        gates: Gates,
        wall: WallClock,
        *,
        timer: bool = True,
        heartbeat: float = HEARTBEAT,
        tasks: Supervisor | None = None,
    ) -> None:
        self.specs = {spec.name: spec for spec in specs}
        self._triggers: dict[str, BaseTrigger] = {s.name: trigger_for(s) for s in specs}
        self.store = store
        self.record = ledger_append
        self.gates = gates
        self.wall = wall
        self._timer = Timer(self._fire, self._heartbeat, heartbeat) if timer else None
        self._runners: dict[str, JobRunner] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._supervisor = tasks or Supervisor()
        self._active: set[str] = set()
        self.ask_approval: ApprovalAsker | None = None  # set by the /jobs commands
        self.started = asyncio.Event()
        self.last_tick_at: float | None = None
        self.start_error: str | None = None  # set when start() failed (health reports it)
        self.stop_grace = STOP_GRACE
        self.lateness: deque[float] = deque(maxlen=100_000)  # seconds late, per timed fire

    def register(self, target: str, runner: JobRunner) -> None:
        """Provide the code for `builtin:<name>`, `skill:<name>` or one job (`job:<name>`)."""
        self._runners[target] = runner

    @property
    def running(self) -> bool:
        """Started and not stopped."""
        return self.started.is_set() and (self._timer is None or self._timer.running)

    async def __aenter__(self) -> Self:
        await self.store.open()
        interrupted = await self.store.interrupted(self.wall.time())
        if interrupted:
            log.warning("scheduler: %d run(s) were cut short by the last stop", interrupted)
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._timer is not None:
            self._timer.stop()
        if self._tasks:  # let runs in progress finish (a digest being handed to the outbox)
            await asyncio.wait(list(self._tasks), timeout=self.stop_grace)
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self.started.clear()
        await self.store.close()

    async def start(self) -> None:
        """Catch up on what was missed while down, then arm the timer."""
        if self.started.is_set():
            return
        now = self.wall.time()
        if self._timer is not None:
            self._timer.start()
        for spec in list(self.specs.values()):
            await self._catch_up(spec, now)
        self.last_tick_at = now
        self.started.set()

    async def _heartbeat(self) -> None:
        """The timer's own tick: re-arm any job whose timer was lost and fire any run left
        unclaimed past its time (the timer never silently stops a job)."""
        now = self.wall.time()
        self.last_tick_at = now
        for spec in list(self.specs.values()):
            state = await self.store.job(spec.name)
            if state is None or state.paused or state.next_run_at is None:
                continue
            if state.next_run_at <= now - HEARTBEAT:
                await self._fire(spec.name, state.next_run_at)
            elif self._timer is not None and not self._timer.armed(spec.name):
                self._arm(spec.name, state.next_run_at)

    async def _catch_up(self, spec: JobSpec, now: float) -> None:
        trigger = self._triggers[spec.name]
        fresh = next_after(trigger, now) if spec.enabled else None
        state = await self.store.ensure(spec.name, fresh)
        if not spec.enabled or state.paused:
            await self.store.set_next(spec.name, None)
            return
        due = state.next_run_at
        if due is None or due > now:
            if due != fresh:  # new, or its schedule changed in the jobs file since
                await self.store.set_next(spec.name, fresh)
            self._arm(spec.name, fresh)
            return
        count, latest = missed_between(trigger, due, now)
        if now - latest <= spec.grace_seconds:
            await self._claim_and_run(spec, due, latest, now, "catch_up", missed=count - 1)
            return
        run_id = await self.store.claim(
            spec.name,
            due,
            fresh,
            scheduled_for=latest,
            now=now,
            trigger="catch_up",
            outcome=Outcome.MISSED,
            gate="downtime",
            detail=f"{count} run(s) missed while down",
            missed=count,
        )
        if run_id is not None:
            ctx = JobContext(spec.name, run_id, latest, "catch_up")
            self.record(run_receipt(spec, ctx, Outcome.MISSED, f"missed {count}", "downtime"))
        self._arm(spec.name, fresh)

    def _arm(self, name: str, at: float | None) -> None:
        if self._timer is not None:
            self._timer.arm(name, at)

    def _disarm(self, name: str) -> None:
        if self._timer is not None:
            self._timer.disarm(name)

    async def _fire(self, name: str, armed_for: float) -> None:
        """The timer's callback: claim the due run and start it (without waiting for it)."""
        now = self.wall.time()
        self.note_lateness(now - armed_for)
        state = await self.store.job(name)
        if state is None or state.paused or state.next_run_at is None:
            return
        if state.next_run_at > now + 0.001:  # re-armed meanwhile (a resume): wait for that
            self._arm(name, state.next_run_at)
            return
        await self._claim_and_run(self.specs[name], state.next_run_at, state.next_run_at, now)

    def note_lateness(self, late: float) -> None:
        """Remember how late a timed fire came (the benchmark reads it)."""
        self.lateness.append(late)
        self.last_tick_at = self.wall.time()

    async def run_pending(self, *, wait: bool = True) -> int:
        """Claim and run every job due by the clock now, and wait for them unless told not
        to (tests drive the scheduler with this under a controlled clock). Returns how many
        runs were started."""
        now = self.wall.time()
        self.last_tick_at = now
        started = 0
        for spec in list(self.specs.values()):
            state = await self.store.job(spec.name)
            if state and not state.paused and state.next_run_at and state.next_run_at <= now:
                due = state.next_run_at
                started += await self._claim_and_run(spec, due, due, now)
        if wait:
            await self.idle()
        return started

    async def idle(self) -> None:
        """Wait for every started run to finish."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def _claim_and_run(
        self,
        spec: JobSpec,
        due: float,
        scheduled_for: float,
        now: float,
        trigger: str = "schedule",
        *,
        missed: int = 0,
    ) -> int:
        new_next = next_after(self._triggers[spec.name], max(due, now))
        busy = spec.name in self._active
        run_id = await self.store.claim(
            spec.name,
            due,
            new_next,
            scheduled_for=scheduled_for,
            now=now,
            trigger=trigger,
            outcome=Outcome.SKIPPED if busy else Outcome.RUNNING,
            gate="already_running" if busy else None,
            missed=missed,
        )
        if run_id is None:
            return 0  # someone else claimed this run
        self._arm(spec.name, new_next)
        ctx = JobContext(spec.name, run_id, scheduled_for, trigger)
        if busy:
            reason = "the previous run has not finished"
            self.record(run_receipt(spec, ctx, Outcome.SKIPPED, reason, "already_running"))
            return 0
        self._spawn(spec, ctx)
        return 1

    def _spawn(self, spec: JobSpec, ctx: JobContext) -> None:
        self._active.add(spec.name)
        # A run records its own failure (execute never raises), so none is reported as a
        # dead loop; one that still escapes is logged.
        task = self._supervisor.spawn(
            self._execute(spec, ctx), name=f"job-{spec.name}", report=False
        )
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _execute(self, spec: JobSpec, ctx: JobContext) -> None:
        try:
            await execute(self, spec, ctx)
        finally:
            self._active.discard(spec.name)

    def runner_for(self, spec: JobSpec) -> JobRunner | None:
        """The registered code for a job: its own (`job:<name>`), or its target's."""
        return self._runners.get(f"job:{spec.name}") or self._runners.get(spec.run)

    async def run_now(self, name: str, *, approved: bool = False) -> int | None:
        """Start a run at once (the schedule is unchanged); None when it is already running."""
        spec = self.specs[name]
        if name in self._active:
            return None
        now = self.wall.time()
        trigger = "approved" if approved else "manual"
        run_id = await self.store.claim(
            name, None, None, scheduled_for=now, now=now, trigger=trigger
        )
        assert run_id is not None
        self._spawn(spec, JobContext(name, run_id, now, trigger, approved=approved))
        return run_id

    async def pause(self, name: str) -> None:
        """Stop scheduling a job until resumed."""
        self._disarm(name)
        await self.store.set_paused(name, True, None)

    async def resume(self, name: str) -> float | None:
        """Schedule a job again from now on; returns its next run."""
        spec = self.specs[name]
        nxt = next_after(self._triggers[name], self.wall.time()) if spec.enabled else None
        await self.store.set_paused(name, False, nxt)
        self._arm(name, nxt)
        return nxt

    async def add(self, spec: JobSpec) -> None:
        """Take on a job created while running (from chat; its row is already stored):
        before start() the catch-up arms it, after it is armed now."""
        self.specs[spec.name] = spec
        self._triggers[spec.name] = trigger_for(spec)
        if self.started.is_set():
            state = await self.store.job(spec.name)
            if state is not None and not state.paused:
                self._arm(spec.name, state.next_run_at)

    def forget(self, name: str) -> None:
        """Stop knowing a job (deleted from chat); its stored rows are the caller's."""
        self._disarm(name)
        self.specs.pop(name, None)
        self._triggers.pop(name, None)

    async def defer(self, name: str, until: float) -> None:
        """Run a job again at `until` (a run held by quiet hours), then on its schedule."""
        await self.store.set_next(name, until)
        self._arm(name, until)

    async def states(self) -> list[tuple[JobSpec, JobState]]:
        """Every declared job with its stored state."""
        found = []
        for spec in list(self.specs.values()):
            state = await self.store.job(spec.name) or JobState(
                spec.name, None, False, None, None, None
            )
            found.append((spec, state))
        return found

    async def overdue(self) -> list[str]:
        """Jobs whose run is past due by more than OVERDUE_AFTER and not yet claimed."""
        if not self.started.is_set():
            return []
        now = self.wall.time()
        return [
            spec.name
            for spec, state in await self.states()
            if state.next_run_at is not None and now - state.next_run_at > OVERDUE_AFTER
        ]
