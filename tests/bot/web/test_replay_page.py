"""The receipt page offers a request's replay: its decisions decided again from their
receipts, each beside the one recorded, read in a real headless Chromium at a phone's size."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp

from bot.app import Lancelot
from soul import SHIPPED_VERSIONS_DIR
from tests.bot.web.test_story_page import browse, lancelot  # noqa: F401 (the fixture)
from tests.fakes.browser import chromium
from tests.fakes.channel import MemoryChannel
from tests.fakes.owner import say, tap

READ_REPLAY = """(() => ({
  width: document.documentElement.scrollWidth,
  summary: document.querySelector('.summary').textContent.replace(/\\s+/g, ' ').trim(),
  steps: [...document.querySelectorAll('.replay .step')].map(li => ({
    kind: li.className,
    what: li.querySelector('.what').textContent.trim(),
    recorded: li.querySelector('.recorded').textContent.trim(),
    recomputed: li.querySelector('.recomputed').textContent.trim(),
  })),
}))()"""

UNSEEN = (
    "I cannot see what this command would change before it runs (no sandbox to dry-run it "
    "in), so it needs your approval"
)


async def removal(app: Lancelot) -> None:
    """Two /run requests: a read that runs, and a delete that asks (approved)."""
    phone = MemoryChannel()
    await app.attach(phone)
    (app.home / "workspace" / "old.txt").write_text("old\n")
    await say(app, phone, "/run ls")
    card = await say(app, phone, "/run rm old.txt")
    await tap(app, phone, card, "Approve")
    await app.ledger.flush()


async def test_a_story_offers_its_replay_and_shows_both_decisions_on_a_phone(
    lancelot: Lancelot,  # noqa: F811 (the fixture)
    tmp_path: Path,
) -> None:
    await removal(lancelot)
    link = f"{lancelot.web_url}/receipts?t={await lancelot.viewer.issue_link()}"
    async with chromium(tmp_path / "profile") as page:
        await page.phone(390, 844)
        await page.open(link, lands_on="/receipts")
        offered: list[str] = await page.evaluate(
            "[...document.querySelectorAll('li.story')]"
            ".filter(li => li.textContent.includes('/run rm old.txt'))"
            ".map(li => li.querySelector('a.replay-link').getAttribute('href'))"
        )
        assert len(offered) == 1
        assert offered[0].endswith("/replay")
        await page.open(f"{lancelot.web_url}{offered[0]}", lands_on=offered[0])
        seen: dict[str, Any] = await page.evaluate(READ_REPLAY)
        await page.screenshot(tmp_path / "replay.png")
    assert seen["width"] <= 390
    assert seen["summary"].endswith("Every decision came out the same.")
    assert seen["steps"] == [
        {
            "kind": "step same",
            "what": "1. rm old.txt",
            "recorded": f"needs approval (T3): {UNSEEN}",
            "recomputed": f"needs approval (T3): {UNSEEN}",
        }
    ]
    assert (tmp_path / "replay.png").read_bytes()[:4] == b"\x89PNG"


async def test_a_soul_changed_on_disk_makes_the_step_not_replayable(
    lancelot: Lancelot,  # noqa: F811 (the fixture)
) -> None:
    await removal(lancelot)
    text = (SHIPPED_VERSIONS_DIR / "soul_v1.yaml").read_text(encoding="utf-8")
    (lancelot.home / "soul").mkdir(exist_ok=True)
    changed = text.replace("    creates: T1", "    creates: T3")
    (lancelot.home / "soul" / "soul_v1.yaml").write_text(changed, encoding="utf-8")
    stories = await browse(lancelot, "/receipts")
    story = next(s for s in stories.split('<li class="story"')[1:] if "/run rm old.txt" in s)
    href = story.split('class="open replay-link" href="', 1)[1].split('"', 1)[0]
    page = await browse(lancelot, href)
    assert "This request left no decision that can be decided again." in page
    assert "rm old.txt: soul v1 on disk is not the soul that decided" in page


async def test_an_unknown_request_is_not_found_and_strangers_are_refused(
    lancelot: Lancelot,  # noqa: F811 (the fixture)
) -> None:
    url = f"{lancelot.web_url}/receipts/nothing/replay"
    async with aiohttp.ClientSession() as http, http.get(url) as response:
        assert response.status == 401
    jar = aiohttp.CookieJar(unsafe=True)
    async with aiohttp.ClientSession(cookie_jar=jar) as http:
        token = await lancelot.viewer.issue_link()
        async with http.get(f"{lancelot.web_url}/receipts", params={"t": token}):
            pass
        async with http.get(f"{lancelot.web_url}/receipts/nothing/replay") as response:
            assert response.status == 404
            assert "There is no receipt with that id." in await response.text()
        async with http.get(f"{lancelot.web_url}/receipts/{'x' * 200}/replay") as response:
            assert response.status == 404
