"""The web lookup settings: off by default, set from the environment, an incomplete search
API refused in one line, and the search key hidden from logs and receipts."""

from __future__ import annotations

import pytest

from bot.app import redactor_for
from core.config import load_settings
from core.errors import ConfigError

KEY = "test-search-key-9876"  # not a real key


def test_lookups_are_off_until_configured() -> None:
    lookups = load_settings(environ={}).lookups
    assert not lookups.fetch_enabled
    assert not lookups.search_enabled
    limits = (lookups.fetch_max_bytes, lookups.fetch_max_chars, lookups.fetch_timeout_seconds)
    assert limits == (2 * 1024 * 1024, 12_000, 15.0)
    assert lookups.search_results == 5


def test_the_environment_sets_them() -> None:
    env = {
        "LANCELOT_LOOKUPS_FETCH_ALLOWLIST": "docs.python.org, *.wikipedia.org",
        "LANCELOT_LOOKUPS_FETCH_PRIVATE_HOSTS": "wiki.lan",
        "LANCELOT_LOOKUPS_SEARCH_PROVIDER": "brave",
        "LANCELOT_LOOKUPS_SEARCH_API_KEY": KEY,
        "LANCELOT_LOOKUPS_SEARCH_RESULTS": "8",
    }
    lookups = load_settings(environ=env).lookups
    assert lookups.fetch_allowlist == ("docs.python.org", "*.wikipedia.org")
    assert lookups.fetch_private_hosts == ("wiki.lan",)
    assert (lookups.search_provider, lookups.search_results) == ("brave", 8)
    assert lookups.fetch_enabled
    assert lookups.search_enabled
    assert KEY not in repr(lookups)


@pytest.mark.parametrize(
    ("env", "problem"),
    [
        ({"LANCELOT_LOOKUPS_SEARCH_PROVIDER": "tavily"}, "tavily needs search_api_key"),
        ({"LANCELOT_LOOKUPS_SEARCH_PROVIDER": "searxng"}, "searxng needs search_url"),
        ({"LANCELOT_LOOKUPS_SEARCH_PROVIDER": "bing"}, "lookups.search_provider"),
    ],
)
def test_an_incomplete_search_api_stops_startup_in_one_line(
    env: dict[str, str], problem: str
) -> None:
    with pytest.raises(ConfigError, match=problem) as caught:
        load_settings(environ=env)
    assert "\n" not in str(caught.value)


def test_the_search_key_is_redacted() -> None:
    env = {"LANCELOT_LOOKUPS_SEARCH_PROVIDER": "brave", "LANCELOT_LOOKUPS_SEARCH_API_KEY": KEY}
    redactor = redactor_for(load_settings(environ=env))
    assert KEY not in redactor.text(f"GET /search failed with token {KEY} in it")
