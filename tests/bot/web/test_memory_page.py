"""The read-only memory page: behind the receipt viewer's sign-in, it shows what is held for
the owner, the recent commits and what a search finds, and changes nothing."""

from __future__ import annotations

import html
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import quote

import aiohttp
import pytest

from bot.app import Lancelot, assemble
from core.config import load_settings
from core.features import FeatureFlags
from core.memory.model import Provenance, Quarantined
from tests.fakes.browser import chromium

SECTION_END = "</section>"


@pytest.fixture
async def lancelot(tmp_path: Path) -> AsyncIterator[Lancelot]:
    env = {"LANCELOT_HOME": str(tmp_path / "home"), "LANCELOT_WEB_PORT": "0"}
    async with assemble(load_settings(environ=env)) as app:
        yield app


async def get(app: Lancelot, path: str, *, signed_in: bool = True) -> tuple[int, str]:
    """A page as a browser gets it (signed in through a one-time link, or not)."""
    jar = aiohttp.CookieJar(unsafe=True)
    async with aiohttp.ClientSession(cookie_jar=jar) as http:
        if signed_in:
            token = await app.viewer.issue_link()
            async with http.get(f"{app.web_url}/receipts", params={"t": token}) as signed:
                assert signed.status == 200
        async with http.get(f"{app.web_url}{path}") as response:
            return response.status, html.unescape(await response.text())


def section(page: str, name: str) -> str:
    start = page.index(f'<section id="{name}">')
    return page[start : page.index(SECTION_END, start)]


async def test_the_page_shows_held_edits_commits_and_matches(lancelot: Lancelot) -> None:
    memory = lancelot.memory
    assert memory is not None
    await memory.remember("The owner's server is called atlas.", provenance=Provenance.OWNER)
    held = await memory.remember(
        "The deploy password rotates on Fridays.", provenance=Provenance.TOOL
    )
    assert isinstance(held, Quarantined)
    await memory.record_turn("memory:owner", "owner", "ssh into atlas and check the disk")
    status, page = await get(lancelot, "/memory")
    assert status == 200
    assert "rotates on Fridays" in section(page, "held")
    assert "server is called atlas" in section(page, "commits")
    assert 'id="matches"' not in page
    status, found = await get(lancelot, "/memory?q=atlas")
    assert status == 200
    matches = section(found, "matches")
    assert "The owner's server is called atlas." in matches
    assert "ssh into atlas and check the disk" in matches
    assert "rotates on Fridays" not in matches  # held: not remembered until approved
    # Reading changed nothing: the held edit still waits, no commit was added.
    counts = await memory.counts()
    assert (counts.quarantined, counts.commits) == (1, 1)


async def test_the_page_needs_the_viewer_sign_in(lancelot: Lancelot) -> None:
    assert lancelot.memory is not None
    await lancelot.memory.remember("The owner likes tea.", provenance=Provenance.OWNER)
    status, page = await get(lancelot, "/memory", signed_in=False)
    assert status == 401
    assert "likes tea" not in page
    async with (
        aiohttp.ClientSession() as http,
        http.post(f"{lancelot.web_url}/memory", data={"q": "tea"}) as response,
    ):
        assert response.status == 405  # read-only: nothing but GET and HEAD


@pytest.mark.parametrize("query", ['"', "atlas OR", "NEAR(a b", "*", "a" * 5000, "ü\u0000x"])
async def test_any_search_text_gives_a_page(lancelot: Lancelot, query: str) -> None:
    status, page = await get(lancelot, f"/memory?q={quote(query)}")
    assert status == 200
    assert "No fact matches." in page


async def test_with_memory_off_the_page_says_so(tmp_path: Path) -> None:
    env = {"LANCELOT_HOME": str(tmp_path / "home"), "LANCELOT_WEB_PORT": "0"}
    features = FeatureFlags(environ={"FEATURE_MEMORY": "false"})
    async with assemble(load_settings(environ=env), features=features) as app:
        status, page = await get(app, "/memory")
    assert status == 200
    assert "Memory is switched off here (FEATURE_MEMORY)" in page


async def test_the_page_reads_on_a_phone(lancelot: Lancelot, tmp_path: Path) -> None:
    """In a real headless Chromium at 390x844: reached from the header, nothing wider than
    the screen, a long fact wrapped."""
    assert lancelot.memory is not None
    await lancelot.memory.remember("atlas " + "x" * 300, provenance=Provenance.OWNER)
    await lancelot.memory.remember("held text", provenance=Provenance.TOOL)
    link = f"{lancelot.web_url}/receipts?t={await lancelot.viewer.issue_link()}"
    async with chromium(tmp_path / "profile") as page:
        await page.phone(390, 844)
        await page.open(link, lands_on="/receipts")
        header = await page.evaluate("document.querySelector('header a[href=\"/memory\"]').href")
        await page.open(header, lands_on="/memory")
        seen = await page.evaluate(
            "({width: document.documentElement.scrollWidth, viewport: window.innerWidth,"
            " held: document.querySelector('#held').innerText,"
            " commits: document.querySelector('#commits').innerText})"
        )
        await page.screenshot(tmp_path / "memory.png")
    assert seen["viewport"] == 390
    assert seen["width"] <= 390
    assert "held text" in seen["held"]
    assert "atlas" in seen["commits"]
