"""web_search against a fake search API, as Brave, Tavily and SearXNG: the query and the key
arrive where each API expects them, results come back fenced as untrusted data, refusals are
explained without the key, and the receipt keeps the addresses, not the snippets."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

import pytest

from core.errors import ToolFailed
from core.security.sanitizer import Sanitizer
from core.tools.action import ToolAction
from core.tools.base import ToolResult
from core.tools.capability import CapabilityTokens
from core.tools.search_api import Provider, SearchApi
from core.tools.web_search import WebSearch
from tests.core.tools.fences import fenced_body, header_of
from tests.fakes.search_api import INJECTED, KEY, FakeSearchApi


@pytest.fixture
async def api() -> AsyncIterator[FakeSearchApi]:
    async with FakeSearchApi() as running:
        yield running


def searcher(
    tokens: CapabilityTokens, api: FakeSearchApi, provider: Provider, key: str | None = KEY
) -> WebSearch:
    return WebSearch(tokens, SearchApi(provider, api.url, key, results=2), Sanitizer())


async def search(ops: WebSearch, tokens: CapabilityTokens, query: str) -> ToolResult:
    action = ToolAction("web.search", None, {"query": query})
    return await ops.run(action, tokens.issue(action.digest))


@pytest.mark.parametrize("provider", ["brave", "tavily", "searxng"])
async def test_each_api_returns_results(
    tokens: CapabilityTokens, api: FakeSearchApi, provider: Provider
) -> None:
    result = await search(searcher(tokens, api, provider), tokens, "  tomato   blight ")
    assert result.exit_code == 0
    (asked,) = api.asked
    assert (asked.provider, asked.query) == (provider, "tomato blight")
    assert result.output.startswith(f"web search ({provider}) for 'tomato blight': 2 result(s)")
    assert fenced_body(result.output) == (
        "1. Tomato Blight & more, part 1\nhttps://example.org/tomato-blight/1\n"
        "All about tomato blight, part 1.\n\n"
        "2. Tomato Blight & more, part 2\nhttps://example.org/tomato-blight/2\n"
        "All about tomato blight, part 2."
    )
    assert "UNTRUSTED DATA: a list of search results" in result.output
    assert result.recorded == (
        f"web search ({provider}) for 'tomato blight': 2 result(s): "
        "https://example.org/tomato-blight/1 https://example.org/tomato-blight/2"
    )


async def test_the_key_goes_in_a_header_only(tokens: CapabilityTokens, api: FakeSearchApi) -> None:
    await search(searcher(tokens, api, "brave"), tokens, "beans")
    await search(searcher(tokens, api, "tavily"), tokens, "beans")
    brave, tavily = api.asked
    assert brave.headers["X-Subscription-Token"] == KEY
    assert brave.params == {"q": "beans", "count": "2"}
    assert tavily.headers["Authorization"] == f"Bearer {KEY}"
    assert tavily.method == "POST"
    assert all(KEY not in value for value in brave.params.values())
    assert KEY not in repr(SearchApi("brave", api.url, KEY))


@pytest.mark.parametrize("provider", ["brave", "tavily"])
async def test_a_wrong_key_is_explained_without_the_key(
    tokens: CapabilityTokens,
    api: FakeSearchApi,
    provider: Provider,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    wrong = "wrong-key-1234"
    with pytest.raises(ToolFailed, match=rf"the {provider} search API refused the request") as e:
        await search(searcher(tokens, api, provider, wrong), tokens, "beans")
    assert "HTTP 401" in str(e.value)
    assert wrong not in str(e.value)
    assert wrong not in caplog.text


async def test_searxng_without_json_and_unreachable_apis(
    tokens: CapabilityTokens, api: FakeSearchApi
) -> None:
    closed = WebSearch(tokens, SearchApi("searxng", "http://127.0.0.1:9", None), Sanitizer())
    with pytest.raises(ToolFailed, match="the searxng search API could not be reached"):
        await search(closed, tokens, "beans")
    wrong_path = WebSearch(tokens, SearchApi("searxng", f"{api.url}/nope", None), Sanitizer())
    with pytest.raises(ToolFailed, match=r"the searxng search API answered HTTP 404"):
        await search(wrong_path, tokens, "beans")
    with pytest.raises(ToolFailed, match="a search query is 1 to 400 characters"):
        await search(searcher(tokens, api, "searxng"), tokens, "   ")


async def test_orders_in_a_snippet_stay_data(tokens: CapabilityTokens, api: FakeSearchApi) -> None:
    result = await search(searcher(tokens, api, "searxng"), tokens, "inject beans")
    assert INJECTED in fenced_body(result.output)
    header = header_of(result.output)
    assert "WARNING: this content contains a banned phrase" in header
    assert INJECTED not in header
    assert "reads like an injection" in (result.recorded or "")
    assert "evil.example" not in (result.recorded or "")


async def test_nothing_found(tokens: CapabilityTokens) -> None:
    async with FakeSearchApi(found=0) as empty:
        result = await search(searcher(tokens, empty, "tavily"), tokens, "zzzz")
    assert result.output == "web search (tavily) for 'zzzz': 0 result(s). Nothing was found."
