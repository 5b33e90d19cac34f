"""The capability router: one CommandRunner that hands each action to the best healthy provider."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, replace

from core.errors import NoToolAvailable, PolicyDenied, ToolFailed, ToolUnavailable
from core.tools.action import ToolAction
from core.tools.base import CommandRunner, ToolResult

log = logging.getLogger(__name__)

# None when healthy, else a short reason (safe to show), like core.health.snapshot's checks.
ProviderHealth = Callable[[], Awaitable[str | None]]

HEALTH_TIMEOUT = 2.0


@dataclass(frozen=True, slots=True)
class Route:
    """One provider and what it serves. `local`: it runs only in the local sandbox or the
    workspace (no network, no host programs), so it stays eligible in safe mode."""

    runner: CommandRunner
    capabilities: frozenset[str]
    priority: int
    health: ProviderHealth | None
    local: bool
    order: int  # registration order breaks priority ties
    prefix: str | None = None  # serves, besides, every capability named so (mcp.)

    def serves(self, capability: str) -> bool:
        """Whether this provider serves `capability`."""
        if capability in self.capabilities:
            return True
        return self.prefix is not None and capability.startswith(self.prefix)


class ToolRouter:
    """Dispatches by `action.capability` to the highest-priority healthy provider.

    A provider that raises ToolUnavailable (before doing anything) is skipped and the next
    one tried; the result names the provider that ran and, if better ones were skipped, why.
    In safe mode only `local` providers are eligible. Health answers are cached briefly so a
    command does not pay a probe each time.
    """

    name = "router"

    def __init__(
        self,
        *,
        safe_mode: Callable[[], bool] = lambda: False,
        health_ttl: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._routes: list[Route] = []
        self._safe_mode = safe_mode
        self._ttl = health_ttl
        self._clock = clock
        self._health: dict[str, tuple[float, str | None]] = {}

    def register(
        self,
        runner: CommandRunner,
        capabilities: Iterable[str],
        *,
        priority: int = 0,
        health: ProviderHealth | None = None,
        local: bool = False,
    ) -> None:
        """Add a provider for these capabilities; a higher priority is tried first."""
        caps = frozenset(capabilities)
        if not caps:
            raise ValueError(f"{runner.name} serves no capability")
        if any(r.runner.name == runner.name for r in self._routes):
            raise ValueError(f"a provider named {runner.name!r} is already registered")
        self._routes.append(Route(runner, caps, priority, health, local, len(self._routes)))

    def register_prefix(self, runner: CommandRunner, prefix: str) -> None:
        """Add a provider for every capability that starts with `prefix`, known now or made
        at run time (an MCP server's tools, `mcp.<server>.<tool>`)."""
        if not prefix:
            raise ValueError(f"{runner.name} serves no capability")
        if any(r.runner.name == runner.name for r in self._routes):
            raise ValueError(f"a provider named {runner.name!r} is already registered")
        order = len(self._routes)
        self._routes.append(Route(runner, frozenset(), 0, None, False, order, prefix))

    def in_safe_mode(self) -> bool:
        """Whether only local sandbox providers may run right now."""
        return self._safe_mode()

    def capabilities(self) -> frozenset[str]:
        """Every capability some provider serves."""
        return frozenset(c for r in self._routes for c in r.capabilities)

    def providers(self, capability: str) -> list[Route]:
        """The providers of a capability, best first (ignoring health and safe mode)."""
        found = [r for r in self._routes if r.serves(capability)]
        return sorted(found, key=lambda r: (-r.priority, r.order))

    async def run(self, action: ToolAction, capability: str | None) -> ToolResult:
        """Run the action on the first eligible, healthy provider that accepts it."""
        routes = self.providers(action.capability)
        if not routes:
            known = ", ".join(sorted(self.capabilities())) or "none"
            raise ToolFailed(f"no tool serves {action.capability!r} (known: {known})")
        if self.in_safe_mode():
            routes = [r for r in routes if r.local]
            if not routes:
                raise PolicyDenied(
                    "safe-mode",
                    ("Turn safe mode off (tools.safe_mode / FEATURE_SAFE_MODE) to use it.",),
                    message=f"safe mode allows only local sandbox tools; {action.capability} "
                    "has none",
                )
        skipped: list[tuple[str, str]] = []
        for route in routes:
            reason = await self._check(route)
            if reason is None:
                try:
                    result = await route.runner.run(action, capability)
                except ToolUnavailable as exc:
                    reason = str(exc)
                    self._health[route.runner.name] = (self._clock(), reason)
                else:
                    fallback = "; ".join(f"{name}: {why}" for name, why in skipped) or None
                    return replace(result, provider=route.runner.name, fallback=fallback)
            log.warning("tool provider %s skipped: %s", route.runner.name, reason)
            skipped.append((route.runner.name, reason))
        raise NoToolAvailable(action.capability, tuple(skipped))

    async def health(self) -> str | None:
        """For the health monitor: capabilities no provider can serve right now."""
        down = []
        for capability in sorted(self.capabilities()):
            reasons = [await self._check(r) for r in self.providers(capability)]
            if all(reasons):
                down.append(f"{capability} ({reasons[0]})")
        return f"tools unavailable: {', '.join(down)}" if down else None

    async def _check(self, route: Route) -> str | None:
        if route.health is None:
            return None
        cached = self._health.get(route.runner.name)
        now = self._clock()
        if cached is not None and now - cached[0] < self._ttl:
            return cached[1]
        try:
            async with asyncio.timeout(HEALTH_TIMEOUT):
                reason = await route.health()
        except TimeoutError:
            reason = "health check timed out"
        except Exception as exc:  # a broken probe makes its provider unhealthy, nothing more
            log.exception("health check of %s raised", route.runner.name)
            reason = f"health check failed ({type(exc).__name__})"
        self._health[route.runner.name] = (now, reason)
        return reason
