"""The capability router: priority, health-aware failover, safe mode, clear refusals."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from core.errors import PolicyDenied, ToolFailed, ToolUnavailable
from core.tools.action import ToolAction
from core.tools.base import ToolResult
from core.tools.capability import CapabilityTokens
from core.tools.router import ToolRouter


@dataclass
class Provider:
    """A provider that says who it is; it can be down (health) or refuse (unavailable)."""

    name: str
    tokens: CapabilityTokens
    down: str | None = None
    unavailable: bool = False
    ran: list[str] = field(default_factory=list)
    probes: int = 0

    async def run(self, action: ToolAction, capability: str | None) -> ToolResult:
        self.tokens.check(capability, action.digest)
        if self.unavailable:
            raise ToolUnavailable(f"{self.name} engine unreachable")
        self.ran.append(action.describe())
        return ToolResult(0, f"{self.name} ran {action.describe()}")

    async def health(self) -> str | None:
        self.probes += 1
        return self.down


ECHO = ToolAction("shell.exec", "echo hi")


def token(tokens: CapabilityTokens, action: ToolAction = ECHO) -> str:
    return tokens.issue(action.digest)


async def test_highest_priority_provider_runs_and_is_named(tokens: CapabilityTokens) -> None:
    router = ToolRouter()
    low, high = Provider("safe_repl", tokens), Provider("docker", tokens)
    router.register(low, ["shell.exec"], priority=0, local=True)
    router.register(high, ["shell.exec"], priority=10, health=high.health, local=True)
    result = await router.run(ECHO, token(tokens))
    assert result.provider == "docker"
    assert result.fallback is None
    assert high.ran == ["echo hi"]
    assert low.ran == []


async def test_unhealthy_provider_is_skipped_and_the_fallback_says_why(
    tokens: CapabilityTokens,
) -> None:
    router = ToolRouter()
    low, high = Provider("safe_repl", tokens), Provider("docker", tokens, down="engine down")
    router.register(high, ["shell.exec"], priority=10, health=high.health)
    router.register(low, ["shell.exec"], priority=0)
    result = await router.run(ECHO, token(tokens))
    assert result.provider == "safe_repl"
    assert result.fallback == "docker: engine down"
    assert high.ran == []


async def test_provider_that_turns_out_unavailable_fails_over(tokens: CapabilityTokens) -> None:
    router = ToolRouter()
    high = Provider("docker", tokens, unavailable=True)
    low = Provider("safe_repl", tokens)
    router.register(high, ["shell.exec"], priority=10, health=high.health)
    router.register(low, ["shell.exec"])
    first = await router.run(ECHO, token(tokens))
    assert first.provider == "safe_repl"
    assert "engine unreachable" in (first.fallback or "")
    # Marked down until the health cache expires: no second doomed attempt.
    assert (await router.run(ECHO, token(tokens))).provider == "safe_repl"
    assert await router.health() is None  # shell.exec is still served


async def test_health_is_cached_between_runs(tokens: CapabilityTokens) -> None:
    now = [0.0]
    router = ToolRouter(health_ttl=5.0, clock=lambda: now[0])
    docker = Provider("docker", tokens)
    router.register(docker, ["shell.exec"], health=docker.health)
    for _ in range(3):
        await router.run(ECHO, token(tokens))
    assert docker.probes == 1
    now[0] = 6.0
    await router.run(ECHO, token(tokens))
    assert docker.probes == 2


async def test_no_healthy_provider_fails_with_every_reason(tokens: CapabilityTokens) -> None:
    router = ToolRouter()
    a = Provider("docker", tokens, down="engine down")
    b = Provider("host", tokens, down="FEATURE_TOOLS_HOST_EXECUTION is off")
    router.register(a, ["shell.exec"], priority=2, health=a.health)
    router.register(b, ["shell.exec"], priority=1, health=b.health)
    with pytest.raises(ToolFailed, match="docker: engine down; host: FEATURE_TOOLS_HOST"):
        await router.run(ECHO, token(tokens))
    assert await router.health() == "tools unavailable: shell.exec (engine down)"


async def test_safe_mode_keeps_only_local_sandbox_providers(tokens: CapabilityTokens) -> None:
    safe = [True]
    router = ToolRouter(safe_mode=lambda: safe[0])
    host = Provider("host_shell", tokens)
    sandbox = Provider("docker", tokens)
    web = Provider("web_ops", tokens)
    router.register(host, ["shell.exec"], priority=20, local=False)
    router.register(sandbox, ["shell.exec"], priority=10, local=True)
    router.register(web, ["net.request"])
    assert (await router.run(ECHO, token(tokens))).provider == "docker"
    get = ToolAction("net.request", params={"method": "GET", "url": "http://127.0.0.1/"})
    with pytest.raises(PolicyDenied, match="safe mode"):
        await router.run(get, token(tokens, get))
    assert web.ran == []
    safe[0] = False
    assert (await router.run(ECHO, token(tokens))).provider == "host_shell"


async def test_unknown_capability_is_a_clear_failure(tokens: CapabilityTokens) -> None:
    router = ToolRouter()
    router.register(Provider("safe_repl", tokens), ["shell.exec"])
    action = ToolAction("teleport", params={"to": "mars"})
    with pytest.raises(ToolFailed, match=r"no tool serves 'teleport' \(known: shell.exec\)"):
        await router.run(action, token(tokens, action))


async def test_router_never_runs_without_a_valid_capability(tokens: CapabilityTokens) -> None:
    router = ToolRouter()
    provider = Provider("safe_repl", tokens)
    router.register(provider, ["shell.exec"])
    other = ToolAction("shell.exec", "rm -rf x")
    with pytest.raises(PolicyDenied, match="does not match"):
        await router.run(ECHO, token(tokens, other))
    assert provider.ran == []


def test_duplicate_names_and_empty_registrations_are_refused(tokens: CapabilityTokens) -> None:
    router = ToolRouter()
    router.register(Provider("safe_repl", tokens), ["shell.exec"])
    with pytest.raises(ValueError, match="already registered"):
        router.register(Provider("safe_repl", tokens), ["file.read"])
    with pytest.raises(ValueError, match="serves no capability"):
        router.register(Provider("x", tokens), [])
