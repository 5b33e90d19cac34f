"""WebSearch: the agent's web searches (web.search) through the search API the owner set up
(core/tools/search_api.py). Results reach the model fenced as untrusted data; the receipt
keeps the query, the count and the addresses found, never the snippets."""

from __future__ import annotations

import asyncio
import json

import aiohttp

from core.errors import ToolFailed
from core.security.sanitizer import Sanitizer
from core.security.untrusted import fence
from core.tools.action import ToolAction
from core.tools.base import ToolResult
from core.tools.capability import CapabilityTokens
from core.tools.file_ops import text_param
from core.tools.search_api import Hit, SearchApi
from core.tools.web_fetch import read_at_most

CAPABILITIES = ("web.search",)
MAX_ANSWER_BYTES = 1 << 20
MAX_QUERY_CHARS = 400


class WebSearch:
    """The web.search capability: one query, the API's first results as text."""

    name = "web_search"

    def __init__(
        self, capabilities: CapabilityTokens, api: SearchApi, sanitizer: Sanitizer
    ) -> None:
        self._capabilities = capabilities
        self._api = api
        self._sanitizer = sanitizer

    async def run(self, action: ToolAction, capability: str | None) -> ToolResult:
        """Search for the action's query, after checking its capability token."""
        self._capabilities.check(capability, action.digest)
        if action.capability not in CAPABILITIES:
            raise ToolFailed(f"WebSearch does not serve {action.capability}")
        query = " ".join(text_param(action.params, "query").split())
        if not query or len(query) > MAX_QUERY_CHARS:
            raise ToolFailed(f"a search query is 1 to {MAX_QUERY_CHARS} characters")
        name = f"the {self._api.provider} search API"
        try:
            async with asyncio.timeout(self._api.timeout):
                payload = await self._ask(query)
        except TimeoutError:
            raise ToolFailed(f"{name} did not answer within {self._api.timeout:g} s") from None
        except aiohttp.ClientError as exc:
            raise ToolFailed(f"{name} could not be reached: {type(exc).__name__}") from None
        return self._result(query, self._api.hits(payload))

    async def _ask(self, query: str) -> object:
        """The API's JSON answer; ToolFailed for a refusal or an answer that is not JSON."""
        call = self._api.call(query)
        async with (
            aiohttp.ClientSession() as session,
            session.request(
                call.method,
                call.url,
                params=call.params,
                json=call.body,
                headers=call.headers,
                allow_redirects=False,  # the key stays with the host the owner named
            ) as response,
        ):
            if response.status >= 300:
                raise ToolFailed(self._api.refusal(response.status))
            raw, over = await read_at_most(response, MAX_ANSWER_BYTES)
        if over:
            raise ToolFailed(f"the {self._api.provider} search API answered more than 1 MB")
        try:
            return json.loads(raw)
        except ValueError:
            raise ToolFailed(f"the {self._api.provider} search API did not answer JSON") from None

    def _result(self, query: str, hits: list[Hit]) -> ToolResult:
        facts = f"web search ({self._api.provider}) for {query!r}: {len(hits)} result(s)"
        if not hits:
            return ToolResult(0, facts + ". Nothing was found.", recorded=facts)
        listing = "\n\n".join(
            f"{n}. {hit.title or '(no title)'}\n{hit.url}\n{hit.snippet}".rstrip()
            for n, hit in enumerate(hits, 1)
        )
        fenced = fence(
            listing,
            f"the {self._api.provider} search API",
            "list of search results",
            self._sanitizer,
        )
        recorded = facts + ": " + " ".join(hit.url for hit in hits)
        if fenced.finding:
            recorded += f"; reads like an injection ({fenced.finding})"
        return ToolResult(0, f"{facts}\n{fenced.text}", recorded=recorded)
