"""WebOps against a local site: the network switch, the allowlist (redirects included),
bounded responses, and a POST that only runs once the owner approved it (T3)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from core.errors import PolicyDenied, ToolFailed
from core.governance.policy import PolicyEngine, Verdict
from core.tools.action import ToolAction
from core.tools.base import ToolResult
from core.tools.capability import CapabilityTokens
from core.tools.web_ops import WebOps, host_allowed
from tests.fakes.web_site import FakeSite


@pytest.fixture
async def site() -> AsyncIterator[FakeSite]:
    async with FakeSite() as running:
        yield running


def web(tokens: CapabilityTokens, *, on: bool = True, **options: Any) -> WebOps:
    return WebOps(
        tokens, enabled=lambda: on, allowlist=options.pop("allowlist", ["127.0.0.1"]), **options
    )


def request(method: str, url: str, **params: Any) -> ToolAction:
    return ToolAction("net.request", None, {"method": method, "url": url, **params})


async def send(ops: WebOps, tokens: CapabilityTokens, action: ToolAction) -> ToolResult:
    return await ops.run(action, tokens.issue(action.digest))


async def test_refused_while_the_network_switch_is_off(
    tokens: CapabilityTokens, site: FakeSite
) -> None:
    with pytest.raises(PolicyDenied, match="FEATURE_TOOLS_NETWORK"):
        await send(web(tokens, on=False), tokens, request("GET", f"{site.url}/hello"))
    assert site.hits == []


async def test_refused_for_a_host_not_in_the_allowlist(
    tokens: CapabilityTokens, site: FakeSite
) -> None:
    ops = web(tokens, allowlist=["example.org", "*.example.org"])
    with pytest.raises(PolicyDenied, match=r"127\.0\.0\.1 is not in the network allowlist"):
        await send(ops, tokens, request("GET", f"{site.url}/hello"))
    assert site.hits == []


async def test_get_works_and_the_response_is_bounded(
    tokens: CapabilityTokens, site: FakeSite
) -> None:
    result = await send(web(tokens), tokens, request("GET", f"{site.url}/hello"))
    assert result.exit_code == 0
    assert result.output.startswith("HTTP 200 OK\ntext/plain")
    assert result.output.endswith("hi there")
    big = await send(web(tokens, max_bytes=4096), tokens, request("GET", f"{site.url}/big"))
    assert big.truncated
    assert len(big.output) < 5000
    missing = await send(web(tokens), tokens, request("GET", f"{site.url}/nope"))
    assert missing.exit_code == 1
    assert missing.output.startswith("HTTP 404")


async def test_redirects_are_checked_against_the_allowlist(
    tokens: CapabilityTokens, site: FakeSite
) -> None:
    followed = await send(web(tokens), tokens, request("GET", f"{site.url}/redirect-in"))
    assert followed.output.endswith("hi there")
    with pytest.raises(PolicyDenied, match="localhost is not in the network allowlist"):
        await send(web(tokens), tokens, request("GET", f"{site.url}/redirect-out"))
    assert [h.path for h in site.hits] == ["/redirect-in", "/hello", "/redirect-out"]


async def test_an_allowlisted_name_pointing_at_this_machine_reaches_nothing(
    tokens: CapabilityTokens, site: FakeSite
) -> None:
    # DNS rebinding: the name is allowed, the address it resolves to (loopback) is not.
    ops = web(tokens, allowlist=["localhost"])
    with pytest.raises(PolicyDenied, match="localhost resolves only to private or local"):
        await send(ops, tokens, request("GET", f"http://localhost:{site.port}/hello"))
    assert site.hits == []


async def test_post_is_t3_and_runs_only_with_the_owners_approval(
    tokens: CapabilityTokens, policy: PolicyEngine, site: FakeSite
) -> None:
    get = request("GET", f"{site.url}/hello")
    assert (policy.decide(get).verdict, policy.decide(get).tier) == (Verdict.ALLOW, "T1")
    post = request("POST", f"{site.url}/echo", body="order=42")
    decision = policy.decide(post)
    assert (decision.verdict, decision.tier) == (Verdict.NEEDS_APPROVAL, "T3")
    assert "net.post" in decision.kinds
    assert decision.capability is None  # nothing to run it with until the owner approves
    with pytest.raises(PolicyDenied):
        await web(tokens).run(post, decision.capability)
    assert site.hits == []
    approved = policy.authorize_approved(post)
    result = await web(tokens).run(post, approved)
    assert result.output.startswith("HTTP 201")
    assert result.output.endswith("got order=42")
    assert [(h.method, h.body) for h in site.hits] == [("POST", "order=42")]


async def test_credentials_in_urls_and_other_schemes_are_refused(tokens: CapabilityTokens) -> None:
    for url in ("http://user:pw@127.0.0.1/", "file:///etc/passwd", "ftp://127.0.0.1/x"):
        with pytest.raises(ToolFailed):
            await send(web(tokens), tokens, request("GET", url))


def test_allowlist_matching() -> None:
    allow = ["api.github.com", "*.example.org"]
    assert host_allowed("api.github.com", allow)
    assert host_allowed("API.GitHub.com.", allow)
    assert host_allowed("a.b.example.org", allow)
    assert not host_allowed("example.org", allow)
    assert not host_allowed("evilexample.org", allow)
    assert not host_allowed("api.github.com.evil.net", allow)
