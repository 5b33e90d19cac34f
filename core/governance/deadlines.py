"""The approvals' alarm clock: wakes at each pending approval's deadline and reminder time.

A database error (state.db locked, busy, full, unreadable for a moment) must not stop expiry
and reminders for good, as it once did silently: the round is logged, retried after a backoff
(core/runtime/backoff.py), and /health names the loop until a round succeeds again. Any other
exception ends the loop, and the Supervisor reports it dead in /health.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
from collections.abc import Awaitable, Callable

from core.governance.approvals import Approval, ApprovalState, ApprovalStore
from core.runtime.backoff import Backoff, BackoffConfig
from core.runtime.tasks import Supervisor

log = logging.getLogger(__name__)

NAME = "approval-expiry"
RETRY = BackoffConfig(min_delay=1.0, max_delay=60.0, jitter=0.2)
IDLE = 3600.0  # nothing pending: look again in an hour anyway
SLACK = 0.05  # wake just after a deadline, not just before it

Due = Callable[[Approval], Awaitable[None]]


class Deadlines:
    """Expires what is past its deadline and reminds what waited long enough, then sleeps
    until the next such moment or until `poke()` (a new approval may come due sooner)."""

    def __init__(
        self,
        store: ApprovalStore,
        clock: Callable[[], float],
        remind_after: Callable[[], float | None],
        *,
        expire: Due,
        remind: Due,
        tasks: Supervisor,
        retry: BackoffConfig = RETRY,
    ) -> None:
        self._store = store
        self._clock = clock
        self._remind_after = remind_after
        self._expire = expire
        self._remind = remind
        self._supervisor = tasks
        self._retry = retry
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start the loop (supervised as `approval-expiry`)."""
        self._task = self._supervisor.spawn(self._run(), name=NAME)

    async def stop(self) -> None:
        """Stop the loop; a round under way is cancelled (its steps are each atomic). A loop
        that died earlier does not fail the stop: the Supervisor has logged and reported it."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.wait([self._task])

    def poke(self) -> None:
        """Look again now: a new approval's deadline may be the nearest."""
        self._wake.set()

    async def _run(self) -> None:
        backoff = Backoff(self._retry)
        failed = False
        while True:
            self._wake.clear()  # before the round: a poke during it is not lost
            try:
                wait = await self._round()
            except sqlite3.OperationalError as exc:  # locked, busy, I/O, full: may pass
                failed = True
                delay = next(backoff)
                log.warning("approval expiry: state.db failed (%s); retrying in %.1f s", exc, delay)
                self._supervisor.failing(NAME, f"state.db: {exc}")
                await asyncio.sleep(delay)  # not cut short by a poke: the database needs time
                continue
            if failed:
                failed = False
                backoff.reset()
                log.info("approval expiry: state.db answers again")
                self._supervisor.recovered(NAME)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(wait + SLACK):
                    await self._wake.wait()

    async def _round(self) -> float:
        """Expire and remind what is due now; return the seconds until the next moment due."""
        pending = await self._store.in_states(ApprovalState.PENDING)
        now = self._clock()
        remind_after = self._remind_after()
        upcoming = [IDLE]
        for approval in pending:
            if now > approval.expires_at:
                await self._expire(approval)
                continue
            upcoming.append(approval.expires_at - now)
            if remind_after is None:
                continue
            remind_at = approval.created_at + remind_after
            if now >= remind_at:
                await self._remind(approval)
            else:
                upcoming.append(remind_at - now)
        return min(upcoming)
