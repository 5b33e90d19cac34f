"""WebOps: HTTP requests (net.request), only with FEATURE_TOOLS_NETWORK on and to allowlisted
hosts; every redirect is checked against the allowlist again; responses are bounded."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Sequence
from fnmatch import fnmatchcase
from typing import Any

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import ThreadedResolver
from yarl import URL

from core.errors import PolicyDenied, ToolFailed
from core.tools.action import ToolAction
from core.tools.base import ToolResult, bounded
from core.tools.capability import CapabilityTokens
from core.tools.file_ops import text_param

CAPABILITIES = ("net.request",)
METHODS = frozenset({"GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE"})
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
REDIRECTS = frozenset({301, 302, 303, 307, 308})
MAX_REDIRECTS = 5


class PublicOnlyResolver(AbstractResolver):
    """Resolves host names to public addresses only, at connect time: an allowlisted name
    that points at this machine or the LAN (DNS rebinding) reaches nothing. IP literals do
    not come here, so an owner who means a LAN service allowlists its address; names in
    `private_hosts` (exact, as the owner wrote them) may resolve to any address."""

    def __init__(self, private_hosts: frozenset[str] = frozenset()) -> None:
        self._inner = ThreadedResolver()
        self._private_hosts = private_hosts
        self.refused: str | None = None

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        """The public addresses of `host`; OSError (and `refused` set) when it has none."""
        found = await self._inner.resolve(host, port, family)
        if host.lower().rstrip(".") in self._private_hosts:
            return found
        public = [r for r in found if ipaddress.ip_address(r["host"]).is_global]
        if not public:
            self.refused = f"{host} resolves only to private or local addresses"
            raise OSError(self.refused)
        return public

    async def close(self) -> None:
        """Release the inner resolver."""
        await self._inner.close()


def host_allowed(host: str, allowlist: Sequence[str]) -> bool:
    """Exact host, or `*.example.org` for its subdomains (not example.org itself)."""
    host = host.lower().rstrip(".")
    return any(fnmatchcase(host, entry.lower()) for entry in allowlist if entry)


class WebOps:
    """The net.request capability through aiohttp, one session per request (no shared cookies,
    no proxy from the environment)."""

    name = "web_ops"

    def __init__(
        self,
        capabilities: CapabilityTokens,
        *,
        enabled: Callable[[], bool],
        allowlist: Sequence[str],
        timeout: float = 20.0,
        max_bytes: int = 1 << 20,
    ) -> None:
        self._capabilities = capabilities
        self._enabled = enabled
        self._allowlist = tuple(allowlist)
        self._timeout = timeout
        self._max_bytes = max_bytes

    async def run(self, action: ToolAction, capability: str | None) -> ToolResult:
        """Send the request the action names, exactly, after checking its capability token."""
        self._capabilities.check(capability, action.digest)
        if action.capability not in CAPABILITIES:
            raise ToolFailed(f"WebOps does not serve {action.capability}")
        if not self._enabled():
            raise PolicyDenied(
                "network-off",
                ("Ask the owner to set FEATURE_TOOLS_NETWORK=true.",),
                message="network requests are switched off (FEATURE_TOOLS_NETWORK)",
            )
        method = text_param(action.params, "method").upper()
        if method not in METHODS:
            raise ToolFailed(f"unsupported HTTP method {method!r}")
        url = self._checked(text_param(action.params, "url"))
        headers = action.params.get("headers") or {}
        if not isinstance(headers, dict):
            raise ToolFailed("parameter 'headers' must be a mapping")
        body = action.params.get("body")
        try:
            return await self._send(method, url, headers, body)
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise ToolFailed(f"{method} {url.host}: {type(exc).__name__} {exc}".strip()) from None

    def _checked(self, raw: str | URL) -> URL:
        url = URL(raw) if isinstance(raw, str) else raw
        if url.scheme not in ("http", "https") or not url.host:
            raise ToolFailed(f"{str(url)[:200]!r} is not an http(s) URL")
        if url.user or url.password:
            raise ToolFailed("credentials in a URL are not accepted; use a header")
        if not host_allowed(url.host, self._allowlist):
            raise PolicyDenied(
                "network-allowlist",
                ("Add the host to tools.network_allowlist in the settings.",),
                message=f"{url.host} is not in the network allowlist",
            )
        return url

    async def _send(self, method: str, url: URL, headers: dict[str, Any], body: Any) -> ToolResult:
        timeout = aiohttp.ClientTimeout(total=self._timeout)
        data = body.encode() if isinstance(body, str) else None
        resolver = PublicOnlyResolver()
        connector = aiohttp.TCPConnector(resolver=resolver)
        try:
            async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
                return await self._follow(session, method, url, headers, data)
        except aiohttp.ClientError:
            if resolver.refused is not None:
                raise PolicyDenied(
                    "network-private-address",
                    ("Allowlist the service's IP address if it is meant to be reached.",),
                    message=resolver.refused,
                ) from None
            raise

    async def _follow(
        self,
        session: aiohttp.ClientSession,
        method: str,
        url: URL,
        headers: dict[str, Any],
        data: bytes | None,
    ) -> ToolResult:
        for _ in range(MAX_REDIRECTS + 1):
            async with session.request(
                method,
                url,
                headers={str(k): str(v) for k, v in headers.items()},
                data=data,
                allow_redirects=False,
            ) as response:
                location = response.headers.get("Location")
                # Only safe methods follow: an approved POST goes where the card said.
                if response.status in REDIRECTS and location and method in SAFE_METHODS:
                    url = self._checked(response.url.join(URL(location)))
                    continue
                payload = await response.content.read(self._max_bytes + 1)
                return self._result(response, payload)
        raise ToolFailed(f"more than {MAX_REDIRECTS} redirects")

    def _result(self, response: aiohttp.ClientResponse, payload: bytes) -> ToolResult:
        kind = response.headers.get("Content-Type", "")
        head = f"HTTP {response.status} {response.reason or ''}".rstrip()
        try:
            text = payload[: self._max_bytes].decode(response.charset or "utf-8", "replace")
        except LookupError:  # a charset Python does not know
            text = payload[: self._max_bytes].decode("utf-8", "replace")
        shown, cut = bounded(f"{head}\n{kind}\n\n{text}")
        exit_code = 0 if response.status < 400 else 1
        return ToolResult(exit_code, shown, cut or len(payload) > self._max_bytes)
