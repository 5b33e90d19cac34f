"""The built-in jobs: health_sweep, memory_cleanup and credential_rotation (the digest's job
lives with the digest)."""

from __future__ import annotations

from dataclasses import dataclass, field

from core.delivery.outbox import Outbox
from core.health.snapshot import HealthMonitor
from core.memory import Memory
from core.scheduler.job import JobContext, Unchanged
from core.scheduler.store import SchedulerStore
from core.security.tokens import ActionTokens
from core.security.viewer_access import ViewerAccess

DAY = 86400.0


@dataclass
class Builtins:
    """The code behind `builtin:<name>` jobs."""

    health: HealthMonitor
    tokens: ActionTokens
    viewer: ViewerAccess
    outbox: Outbox
    store: SchedulerStore
    memory: Memory | None = None  # None: FEATURE_MEMORY is off
    keep_days: float = 30.0
    _last_sweep: tuple[bool, tuple[str, ...]] | None = field(default=None, init=False)

    async def health_sweep(self, ctx: JobContext) -> str | Unchanged:
        """Run every health check now (alerts follow transitions, as in the monitor loop).
        A sweep that finds the same checks failing (or none) as the last one is Unchanged:
        its run is in the history, but only changes leave a receipt (transitions also have
        their health_* receipts)."""
        snapshot = await self.health.tick()
        if not snapshot.degraded:
            detail = "all checks pass"
        else:
            detail = "degraded: " + "; ".join(snapshot.degraded_reasons)
        seen = (snapshot.ready, snapshot.failing)
        unchanged, self._last_sweep = seen == self._last_sweep, seen
        return Unchanged(detail) if unchanged else detail

    async def memory_cleanup(self, ctx: JobContext) -> str:
        """Forget what has expired: spent or stale button tokens, receipt links, delivered
        outbox rows and old run history; and tidy memory (expire working tasks, summarise old
        conversations, promote facts repeated across them). Receipts are never touched."""
        tokens = await self.tokens.prune(older_than=DAY)
        await self.viewer.prune()
        outbox = await self.outbox.store.prune(self.keep_days * DAY)
        runs = await self.store.prune_runs(ctx.scheduled_for - self.keep_days * DAY)
        done = f"pruned {tokens} token(s), {outbox} outbox row(s), {runs} run record(s)"
        if self.memory is None:
            return done
        kept = await self.memory.cleanup(ctx.scheduled_for)
        return (
            f"{done}; memory: {kept.expired_tasks} task(s) expired, {kept.summaries} "
            f"conversation summary(ies) of {kept.summarised_turns} turn(s), "
            f"{kept.promoted} fact(s) promoted"
        )

    async def credential_rotation(self, ctx: JobContext) -> str:
        """Revoke every receipt link not yet opened (each must be asked for again). Runs only
        with the owner's approval (the job is T3 and requires it)."""
        revoked = await self.viewer.revoke_unopened()
        return f"revoked {revoked} unopened receipt link(s)"
