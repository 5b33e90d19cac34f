"""What must hold before a scheduled job runs: onboarding, the local model, the spending
budget, owner approval."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from core.scheduler.config import JobSpec
from soul import Soul, tier_rank

READY = "READY"


async def _within_budget() -> str | None:
    return None  # no budget is wired: nothing pauses


@dataclass(frozen=True, slots=True)
class GateRefusal:
    """A gate that said no, and why (short, safe to show)."""

    gate: str
    reason: str


@dataclass
class Gates:
    """The checks before every run.

    `onboarding` gives the onboarding state (READY when settings and the Soul are loaded);
    `enabled` is the kill switch (read at every run, so a SIGHUP reload applies at once);
    `local_model` says whether the local model is healthy (None: no such check is registered,
    so a job that needs it cannot run); `soul` gives the active Soul, whose scheduling
    boundary decides which tiers need an owner's approval; `crusader` says whether Crusader
    mode lets a job of that tier run without the owner's tap (governance decides:
    `PolicyEngine.crusader_approves`); `over_budget` says why paid model calls are paused
    (a spending budget is used up), or None, for jobs that use the flagship.
    """

    onboarding: Callable[[], str]
    local_model: Callable[[], Awaitable[bool | None]]
    soul: Callable[[], Soul | None]
    enabled: Callable[[], bool] = lambda: True  # the FEATURE_SCHEDULER kill switch
    crusader: Callable[[str], bool] = lambda tier: False
    over_budget: Callable[[], Awaitable[str | None]] = _within_budget

    def needs_approval(self, spec: JobSpec) -> bool:
        """Whether every run of this job waits for an owner's tap."""
        if spec.requires_approval:
            return True
        soul = self.soul()
        if soul is None:  # no constitution to say what is allowed: nothing above T0 alone
            return spec.tier != "T0"
        bounds = soul.scheduling_boundaries
        if spec.tier == "T3" and not bounds.allow_autonomous_irreversible:
            return True
        return tier_rank(spec.tier) > tier_rank(bounds.max_tier_without_approval)

    def waived(self, spec: JobSpec, *, approved: bool) -> bool:
        """Whether this run goes without the owner's tap only because Crusader mode is on
        (never for a job that says it must be approved)."""
        return (
            not approved
            and not spec.requires_approval
            and self.needs_approval(spec)
            and self.crusader(spec.tier)
        )

    async def check(self, spec: JobSpec, *, approved: bool) -> GateRefusal | None:
        """The first gate that refuses this run, or None when it may run."""
        if not self.enabled():
            return GateRefusal("kill_switch", "scheduled jobs are switched off (FEATURE_SCHEDULER)")
        state = self.onboarding()
        if state != READY:
            return GateRefusal("onboarding", f"onboarding is {state}, not {READY}")
        if spec.needs_local_model:
            healthy = await self.local_model()
            if healthy is None:
                return GateRefusal("local_model", "no local model is configured")
            if not healthy:
                return GateRefusal("local_model", "the local model is not healthy")
        if spec.uses_flagship and (reason := await self.over_budget()) is not None:
            return GateRefusal("budget", f"paused: {reason}")
        if not approved and self.needs_approval(spec) and not self.waived(spec, approved=False):
            return GateRefusal("owner_approval", f"a {spec.tier} job needs your approval")
        return None
