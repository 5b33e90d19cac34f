"""/health: the readiness snapshot as a card."""

from __future__ import annotations

from core.commands.registry import CommandContext, CommandRegistry, Router
from core.events import Card, CardKind
from core.health.snapshot import HealthMonitor
from core.security.owner_view import OwnerView


def register_health_command(
    registry: CommandRegistry, health: HealthMonitor, owner: OwnerView
) -> None:
    """Add /health (its times in the owner's)."""

    def _when(ts: float | None) -> str:
        return owner.when(ts) if ts else "never"

    async def show(ctx: CommandContext) -> Card:
        snapshot = await health.snapshot()
        local = snapshot.local_llm_ready
        fields = (
            ("Ready", "yes" if snapshot.ready else "no"),
            ("Onboarding", snapshot.onboarding_state),
            ("Local model", "not configured" if local is None else ("ready" if local else "down")),
            ("Scheduler", "running" if snapshot.scheduler_running else "stopped"),
            ("Last health tick", _when(snapshot.last_health_tick_at)),
            ("Last scheduler tick", _when(snapshot.last_scheduler_tick_at)),
        )
        body = "\n".join(f"- {r}" for r in snapshot.degraded_reasons) or "Every check passes."
        if snapshot.passing:
            body += f"\nPassing: {', '.join(snapshot.passing)}."
        if not snapshot.ready:
            title = "Health: not ready"
        else:
            title = "Health: ready, degraded" if snapshot.degraded else "Health: ready"
        return Card(kind=CardKind.REPLY, title=title, body=body, fields=fields)

    router = Router("health")
    router.command("health", "readiness, scheduler and what is degraded", show)
    registry.include(router)
