"""The search APIs web_search can use, each spoken as its documentation says: Brave Search
(GET, key in X-Subscription-Token), Tavily (POST JSON, key as a Bearer token) and SearXNG
(GET with format=json, usually no key). The key only ever goes in a header."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ValidationError
from yarl import URL

from core.errors import ToolFailed

Provider = Literal["brave", "tavily", "searxng"]
DEFAULT_BASES: dict[str, str] = {
    "brave": "https://api.search.brave.com",
    "tavily": "https://api.tavily.com",
}
PATHS: dict[str, str] = {"brave": "res/v1/web/search", "tavily": "search", "searxng": "search"}
SNIPPET_CHARS = 300
_MARKUP = re.compile(r"<[^>]{0,200}>")


@dataclass(frozen=True, slots=True)
class Hit:
    """One search result: title, address and the snippet the API gave."""

    title: str
    url: str
    snippet: str


@dataclass(frozen=True, slots=True)
class ApiCall:
    """One HTTP request to a search API."""

    method: str
    url: URL
    headers: dict[str, str]
    params: dict[str, str] = field(default_factory=dict)
    body: dict[str, Any] | None = None


class _Result(BaseModel):
    title: str = ""
    url: str
    content: str = ""  # Tavily's and SearXNG's snippet
    description: str = ""  # Brave's snippet


class _Results(BaseModel):
    results: list[_Result] = []


class _Brave(BaseModel):
    web: _Results = _Results()


@dataclass(frozen=True, slots=True, repr=False)
class SearchApi:
    """The configured search API (settings: `lookups.search_*`). Its repr names no key."""

    provider: Provider
    base: str
    key: str | None = None
    results: int = 5
    timeout: float = 10.0

    def __repr__(self) -> str:
        return f"SearchApi({self.provider}, {self.base})"

    @property
    def endpoint(self) -> URL:
        """Where queries go: the base URL and the provider's search path."""
        return URL(self.base.rstrip("/") + "/" + PATHS[self.provider])

    def call(self, query: str) -> ApiCall:
        """The request that asks for `query`'s first results."""
        accept = {"Accept": "application/json"}
        if self.provider == "brave":
            headers = {**accept, "X-Subscription-Token": self.key or ""}
            params = {"q": query, "count": str(self.results)}
            return ApiCall("GET", self.endpoint, headers, params)
        if self.provider == "tavily":
            headers = {**accept, "Authorization": f"Bearer {self.key or ''}"}
            body = {"query": query, "max_results": self.results, "search_depth": "basic"}
            return ApiCall("POST", self.endpoint, headers, body=body)
        return ApiCall("GET", self.endpoint, accept, {"q": query, "format": "json"})

    def hits(self, payload: Any) -> list[Hit]:
        """The results in the API's answer, at most `results` of them."""
        try:
            if self.provider == "brave":
                found = _Brave.model_validate(payload).web.results
            else:
                found = _Results.model_validate(payload).results
        except ValidationError:
            raise ToolFailed(
                f"the {self.provider} search API answered in an unknown shape"
            ) from None
        return [
            Hit(_plain(r.title), r.url, _plain(r.description or r.content)[:SNIPPET_CHARS])
            for r in found[: self.results]
        ]

    def refusal(self, status: int) -> str:
        """Why a non-2xx answer means no results, for the model and the owner."""
        name = f"the {self.provider} search API"
        if status in (401, 403):
            hint = (
                " (is format=json enabled on the instance?)" if self.provider == "searxng" else ""
            )
            return f"{name} refused the request (HTTP {status}){hint}; check lookups.search_api_key"
        if status == 429:
            return f"{name} is limiting the rate of searches (HTTP 429); try again later"
        return f"{name} answered HTTP {status}"


def _plain(text: str) -> str:
    """A title or snippet without the markup some APIs put in (Brave's <strong>)."""
    return " ".join(html.unescape(_MARKUP.sub("", text)).split())
