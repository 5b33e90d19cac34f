"""WebFetch: a web page as readable text for the agent (web.fetch).

Only hosts in the lookup allowlist, each redirect checked again; a private, loopback or
link-local address is refused, as an IP literal or after DNS resolution, unless the owner
named that exact host; bounded in bytes read and in time. The text reaches the model fenced
as untrusted data (core/security/untrusted.py); the receipt keeps the address and the sizes,
never the text.
"""

from __future__ import annotations

import asyncio
import codecs
import ipaddress
from collections.abc import Sequence
from dataclasses import dataclass

import aiohttp
from yarl import URL

from core.errors import PolicyDenied, ToolFailed
from core.security.sanitizer import Sanitizer
from core.security.untrusted import fence
from core.tools.action import ToolAction
from core.tools.base import ToolResult
from core.tools.capability import CapabilityTokens
from core.tools.file_ops import text_param
from core.tools.readable import Page, TooDeep, clip, readable, tidy
from core.tools.web_ops import MAX_REDIRECTS, REDIRECTS, PublicOnlyResolver, host_allowed

CAPABILITIES = ("web.fetch",)
HEADERS = {"User-Agent": "Lancelot/0.1 (web_fetch)", "Accept": "text/html, text/*;q=0.9, */*;q=0.1"}
_HTML = ("text/html", "application/xhtml+xml")
_TEXT = ("application/json", "application/xml", "application/javascript")
CHUNK = 1 << 16


@dataclass(frozen=True, slots=True)
class FetchLimits:
    """Where web_fetch may go and how much it reads (settings: `lookups.*`)."""

    allowlist: tuple[str, ...]  # hosts; "*.example.org", or "*" for any public host
    private_hosts: frozenset[str] = frozenset()  # exact hosts allowed on private addresses
    max_bytes: int = 2 << 20
    max_chars: int = 12_000
    timeout: float = 15.0

    @classmethod
    def of(
        cls,
        allowlist: Sequence[str],
        private_hosts: Sequence[str],
        max_bytes: int,
        max_chars: int,
        timeout: float,
    ) -> FetchLimits:
        """Limits with host names compared the way URLs spell them (lowercase, no dot)."""
        hosts = frozenset(h.lower().rstrip(".").strip("[]") for h in private_hosts)
        return cls(tuple(allowlist), hosts, max_bytes, max_chars, timeout)


@dataclass(frozen=True, slots=True)
class Fetched:
    """One response as read: where it ended up, its status and type, and the bytes read."""

    url: URL
    status: int
    content_type: str
    charset: str
    body: bytes
    over: bool  # the page is longer than the bytes read


class WebFetch:
    """The web.fetch capability: GET one page, follow checked redirects, return its text."""

    name = "web_fetch"

    def __init__(
        self, capabilities: CapabilityTokens, limits: FetchLimits, sanitizer: Sanitizer
    ) -> None:
        self._capabilities = capabilities
        self._limits = limits
        self._sanitizer = sanitizer

    async def run(self, action: ToolAction, capability: str | None) -> ToolResult:
        """Fetch the page the action names, after checking its capability token."""
        self._capabilities.check(capability, action.digest)
        if action.capability not in CAPABILITIES:
            raise ToolFailed(f"WebFetch does not serve {action.capability}")
        url = self.checked(text_param(action.params, "url"))
        try:
            async with asyncio.timeout(self._limits.timeout):
                fetched = await self._get(url)
        except TimeoutError:
            raise ToolFailed(
                f"{url.host} did not answer within {self._limits.timeout:g} s"
            ) from None
        except aiohttp.ClientError as exc:
            raise ToolFailed(f"GET {url.host}: {type(exc).__name__} {exc}".strip()) from None
        # Parsing, reducing and screening a page is CPU work: a thread, not the event loop.
        return await asyncio.to_thread(self._result, fetched)

    def checked(self, raw: str | URL) -> URL:
        """The URL if web_fetch may open it; PolicyDenied or ToolFailed saying why not."""
        try:
            url = URL(raw) if isinstance(raw, str) else raw
        except ValueError:
            raise ToolFailed(f"{str(raw)[:200]!r} is not a URL") from None
        if url.scheme not in ("http", "https") or not url.host:
            raise ToolFailed(f"{str(url)[:200]!r} is not an http(s) URL")
        if url.user or url.password:
            raise ToolFailed("credentials in a URL are not accepted")
        host = url.host.lower().rstrip(".")
        if not host_allowed(host, self._limits.allowlist):
            raise PolicyDenied(
                "web-allowlist",
                ("Ask the owner to add the host to lookups.fetch_allowlist.",),
                message=f"{host} is not in the web lookup allowlist",
            )
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return url  # a name: its addresses are checked when it is resolved
        if not address.is_global and host not in self._limits.private_hosts:
            raise _private(f"{host} is a private or local address")
        return url

    async def _get(self, url: URL) -> Fetched:
        resolver = PublicOnlyResolver(self._limits.private_hosts)
        connector = aiohttp.TCPConnector(resolver=resolver)
        try:
            async with aiohttp.ClientSession(connector=connector, headers=HEADERS) as session:
                return await self._follow(session, url)
        except aiohttp.ClientError:
            if resolver.refused is not None:
                raise _private(resolver.refused) from None
            raise

    async def _follow(self, session: aiohttp.ClientSession, url: URL) -> Fetched:
        for _ in range(MAX_REDIRECTS + 1):
            async with session.get(url, allow_redirects=False) as response:
                location = response.headers.get("Location")
                if response.status in REDIRECTS and location:
                    url = self.checked(response.url.join(URL(location)))
                    continue
                body, over = await read_at_most(response, self._limits.max_bytes)
                return Fetched(
                    response.url,
                    response.status,
                    response.content_type.lower(),
                    _codec(response.charset),
                    body,
                    over,
                )
        raise ToolFailed(f"more than {MAX_REDIRECTS} redirects")

    def _result(self, fetched: Fetched) -> ToolResult:
        """The page's text fenced as untrusted data, with what was cut said outside it."""
        kind = fetched.content_type
        limit = self._limits.max_chars
        if kind in _HTML:
            try:
                page = readable(fetched.body, fetched.charset, limit, str(fetched.url))
            except TooDeep as exc:
                raise ToolFailed(f"{fetched.url}: {exc}; not read") from None
        elif kind.startswith("text/") or kind in _TEXT or kind.endswith(("+json", "+xml")):
            text, cut = clip(tidy(fetched.body.decode(fetched.charset, "replace")), limit)
            page = Page("", text, cut)
        else:
            raise ToolFailed(
                f"{fetched.url} is {kind or 'of no stated type'} ({len(fetched.body):,} bytes "
                "read), not a page or text; web_fetch reads only those"
            )
        return self._fenced(fetched, page)

    def _fenced(self, fetched: Fetched, page: Page) -> ToolResult:
        facts = (
            f"GET {fetched.url}: HTTP {fetched.status}, {fetched.content_type or 'no type'}, "
            f"{len(fetched.body):,} bytes read"
        )
        notes = []
        if fetched.over:
            notes.append(
                f"The page is larger than {self._limits.max_bytes:,} bytes; only that much "
                "was read, so its text is incomplete."
            )
        if page.cut:
            notes.append(f"The text was cut at {self._limits.max_chars:,} characters.")
        content = f"Title: {page.title}\n\n{page.text}" if page.title else page.text
        if page.links:
            content += "\n\nLinks:\n" + "\n".join(f"- {link}" for link in page.links)
        fenced = fence(
            content or "(no readable text)", str(fetched.url), "web page", self._sanitizer
        )
        shown = "\n".join([facts, *notes, fenced.text])
        recorded = f"{facts}, {len(page.text):,} characters of text"
        if page.cut or fetched.over:
            recorded += " (cut)"
        if fenced.finding:
            recorded += f"; reads like an injection ({fenced.finding})"
        exit_code = 0 if fetched.status < 400 else 1
        return ToolResult(exit_code, shown, page.cut or fetched.over, recorded=recorded)


async def read_at_most(response: aiohttp.ClientResponse, limit: int) -> tuple[bytes, bool]:
    """At most `limit` bytes of the (decompressed) body; True when there was more."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.content.iter_chunked(CHUNK):
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            return b"".join(chunks)[:limit], True
    return b"".join(chunks), False


def _codec(charset: str | None) -> str:
    """The response's charset if Python knows it, else UTF-8."""
    if charset:
        try:
            return codecs.lookup(charset).name
        except LookupError:
            pass
    return "utf-8"


def _private(message: str) -> PolicyDenied:
    return PolicyDenied(
        "web-private-address",
        (
            "Ask the owner to list the host in lookups.fetch_private_hosts if it is meant "
            "to be reached.",
        ),
        message=message,
    )
