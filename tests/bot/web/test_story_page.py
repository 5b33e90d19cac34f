"""The receipt page tells the story of each request, read in a real headless Chromium at a
phone's size (390x844): the DOM is checked, not the pixels."""

from __future__ import annotations

import asyncio
import html
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bot.app import Lancelot, assemble
from bot.web.receipts import STORIES_PER_PAGE
from core.config import load_settings
from core.receipts.base import ReceiptQuery
from tests.fakes.browser import chromium
from tests.fakes.channel import MemoryChannel
from tests.fakes.owner import say, tap
from tests.fakes.scripted_model import ScriptedRouter, call, final

READ_STORIES = """(() => {
  const stories = [...document.querySelectorAll('li.story')].map(li => {
    li.querySelector('details').open = true;
    const lines = [...li.querySelectorAll('.lines li')];
    return {
      summary: li.querySelector('summary').textContent.replace(/\\s+/g, ' ').trim(),
      lines: lines.map(x => x.textContent.replace(/\\s+/g, ' ').trim()),
      shown: lines.every(x => x.getBoundingClientRect().height > 0),
    };
  });
  const rel = document.querySelector('.rel-time'), abs = document.querySelector('.abs-time');
  return {
    width: document.documentElement.scrollWidth,
    viewport: window.innerWidth,
    relative: rel ? getComputedStyle(rel).display !== 'none' : null,
    absolute: abs ? getComputedStyle(abs).display !== 'none' : null,
    stories,
  };
})()"""


@pytest.fixture
async def lancelot(tmp_path: Path) -> AsyncIterator[Lancelot]:
    """No sandbox image: a command that deletes waits for the owner's approval."""
    env = {
        "LANCELOT_HOME": str(tmp_path / "home"),
        "LANCELOT_WEB_PORT": "0",
        "LANCELOT_SANDBOX_IMAGE": "lancelot-test-missing:none",
    }
    async with assemble(load_settings(environ=env)) as app:
        yield app


async def test_a_request_with_its_approval_and_tool_run_on_a_phone(
    lancelot: Lancelot, tmp_path: Path
) -> None:
    phone = MemoryChannel()
    await lancelot.attach(phone)
    (lancelot.home / "workspace" / "old.txt").write_text("old\n")
    await say(lancelot, phone, "/run ls")
    card = await say(lancelot, phone, "/run rm old.txt")
    assert [b.label for b in card.buttons] == ["Approve", "Deny"]
    await tap(lancelot, phone, card, "Approve")
    await lancelot.ledger.flush()
    link = f"{lancelot.web_url}/receipts?t={await lancelot.viewer.issue_link()}"

    async with chromium(tmp_path / "profile") as page:
        await page.phone(390, 844)
        await page.open(link, lands_on="/receipts")
        seen: dict[str, Any] = await page.evaluate(READ_STORIES)
        await page.screenshot(tmp_path / "stories.png")

    assert seen["viewport"] == 390
    assert seen["width"] <= 390  # nothing wider than the phone
    assert (seen["relative"], seen["absolute"]) == (True, False)  # "5 min ago" on a phone
    by_preview = {s["summary"].split(" ", 1)[1]: s for s in seen["stories"]}
    removal = next(s for text, s in by_preview.items() if text.startswith("/run rm old.txt"))
    assert removal["summary"].startswith("success /run rm old.txt just now")
    assert removal["summary"].endswith(" · exit 0")
    assert removal["shown"]
    lines = removal["lines"]
    assert any(line.startswith("success policy: needs approval (T3)") for line in lines)
    assert "success approval: rm old.txt; approved by owner on memory" in lines
    assert "success ran: rm old.txt (exit 0)" in lines
    listing = next(s for text, s in by_preview.items() if text.startswith("/run ls"))
    assert "success ran: ls (exit 0)" in listing["lines"]
    assert (tmp_path / "stories.png").read_bytes()[:4] == b"\x89PNG"
    assert not (lancelot.home / "workspace" / "old.txt").exists()


async def browse(app: Lancelot, path: str) -> str:
    """A page as a signed-in browser gets it."""
    jar = aiohttp.CookieJar(unsafe=True)
    async with aiohttp.ClientSession(cookie_jar=jar) as http:
        token = await app.viewer.issue_link()
        async with http.get(f"{app.web_url}/receipts", params={"t": token}) as signed:
            assert signed.status == 200
        async with http.get(f"{app.web_url}{path}") as response:
            assert response.status == 200
            return html.unescape(await response.text())


async def test_a_request_waiting_for_the_owner_says_so(lancelot: Lancelot) -> None:
    phone = MemoryChannel()
    await lancelot.attach(phone)
    (lancelot.home / "workspace" / "old.txt").write_text("old\n")
    await say(lancelot, phone, "/run rm old.txt")
    await lancelot.ledger.flush()
    text = await browse(lancelot, "/receipts")
    story = text.split('<li class="story"', 2)[1]  # the newest request
    assert "/run rm old.txt" in story
    assert 'class="status s-pending">pending</span>' in story
    assert "waiting for your decision" in story
    assert "approval asked: rm old.txt; waiting for your decision" in story


async def test_a_denied_request_ends_refused_with_nothing_run(lancelot: Lancelot) -> None:
    phone = MemoryChannel()
    await lancelot.attach(phone)
    (lancelot.home / "workspace" / "old.txt").write_text("old\n")
    card = await say(lancelot, phone, "/run rm old.txt")
    await tap(lancelot, phone, card, "Deny")
    await lancelot.ledger.flush()
    text = await browse(lancelot, "/receipts")
    story = next(s for s in text.split('<li class="story"')[1:] if "/run rm old.txt" in s)
    summary = story.split("</summary>", 1)[0]
    assert 'class="status s-refused">refused</span>' in summary
    assert "denied: nothing ran" in summary
    assert "approval: rm old.txt; denied by owner on memory" in story
    assert (lancelot.home / "workspace" / "old.txt").exists()


async def test_a_request_no_model_could_serve_is_not_a_success(tmp_path: Path) -> None:
    env = {
        "LANCELOT_HOME": str(tmp_path / "home"),
        "LANCELOT_WEB_PORT": "0",
        "FEATURE_LOCAL_MODEL": "false",  # no provider and no local model: nothing can answer
    }
    async with assemble(load_settings(environ=env)) as app:
        phone = MemoryChannel()
        await app.attach(phone)
        card = await say(app, phone, "what should I plant in my garden this week?")
        assert card.title == "No model provider configured"
        await app.ledger.flush()
        text = await browse(app, "/receipts")
    story = next(s for s in text.split('<li class="story"')[1:] if "plant in my garden" in s)
    summary = story.split("</summary>", 1)[0]
    assert 'class="status s-skipped">skipped</span>' in summary
    assert "s-success" not in summary


async def test_older_requests_are_one_link_away(lancelot: Lancelot) -> None:
    phone = MemoryChannel()
    await lancelot.attach(phone)
    for i in range(STORIES_PER_PAGE + 2):
        await say(lancelot, phone, f"/status {i}")
    await lancelot.ledger.flush()
    first = await browse(lancelot, "/receipts")
    assert first.count('<li class="story"') == STORIES_PER_PAGE
    assert f"/status {STORIES_PER_PAGE + 1}" in first
    older = re.search(r'href="(/receipts\?before=\d+)" rel="next"', first)
    assert older is not None
    second = await browse(lancelot, older.group(1))
    assert "/status 1<" in second
    assert "/status 0<" in second
    assert f"/status {STORIES_PER_PAGE + 1}<" not in second


async def test_a_search_says_how_many_receipts_match(lancelot: Lancelot) -> None:
    phone = MemoryChannel()
    await lancelot.attach(phone)
    for word in ("zeppelin", "zeppelin", "balloon"):
        await say(lancelot, phone, f"/status {word}")
    await lancelot.ledger.flush_search()
    found = await browse(lancelot, "/receipts?q=zeppelin")
    assert "4 receipts contain these words" in found  # two messages, two /status commands
    assert "2 receipts contain these words" in await browse(lancelot, "/receipts?q=balloon")


async def test_the_detail_page_shows_the_chain_position_and_the_checkpoint(
    lancelot: Lancelot,
) -> None:
    phone = MemoryChannel()
    await lancelot.attach(phone)
    await say(lancelot, phone, "/status")
    await lancelot.ledger.flush()
    newest = (await lancelot.ledger.page(ReceiptQuery(limit=1))).receipts[0]
    path = f"/receipts/{newest.id}"
    total = await lancelot.ledger.count()
    before = await browse(lancelot, path)
    assert f"receipt #{newest.seq} of {total} in the hash chain" in before
    assert "not yet covered: the next signed checkpoint will cover it" in before
    checkpoint = await lancelot.ledger.checkpoint()
    assert checkpoint is not None
    after = await browse(lancelot, path)
    assert f"covered by the signed checkpoint <code>{checkpoint.fingerprint}</code>" in after


async def test_undo_and_a_refused_undo_are_in_the_story_of_the_change(tmp_path: Path) -> None:
    env = {"LANCELOT_HOME": str(tmp_path / "home"), "LANCELOT_WEB_PORT": "0"}
    model = ScriptedRouter(
        [
            call("write_file", path="/workspace/notes.txt", content="a new list\n"),
            final("I rewrote notes.txt.", [("write_file", "/workspace/notes.txt")]),
        ]
    )
    async with assemble(load_settings(environ=env), models=model) as app:
        phone = MemoryChannel()
        await app.attach(phone)
        notes = app.home / "workspace" / "notes.txt"
        notes.write_text("the owner's list\n")
        approval = await say(app, phone, "rewrite notes.txt as a new list")
        await tap(app, phone, approval, "Approve")
        await phone.next_card()
        notes.write_text("edited since\n")  # a later change: Undo must refuse
        refused = await tap(app, phone, await say(app, phone, "/undo"), "Undo 1")
        assert refused is not None
        assert refused.title == "Not undone"
        notes.write_text("a new list\n")
        undone = await tap(app, phone, await say(app, phone, "/undo"), "Undo 1")
        assert undone is not None
        assert undone.title == "Undone"
        await app.ledger.flush()
        link = f"{app.web_url}/receipts?t={await app.viewer.issue_link()}"
        async with chromium(tmp_path / "profile") as page:
            await page.phone(390, 844)
            await page.open(link, lands_on="/receipts")
            seen: dict[str, Any] = await page.evaluate(READ_STORIES)

    story = next(s for s in seen["stories"] if "rewrite notes.txt" in s["summary"])
    assert story["summary"].endswith(" · undone")
    assert story["summary"].startswith("success ")  # a refused undo is its own line's failure
    assert "refused undo refused: these files changed after it: notes.txt" in story["lines"]
    assert any(line.startswith("success undone: ") for line in story["lines"])
    assert notes.read_text() == "the owner's list\n"


async def test_a_withdrawn_approval_says_so_in_its_request(tmp_path: Path) -> None:
    env = {"LANCELOT_HOME": str(tmp_path / "home"), "LANCELOT_WEB_PORT": "0"}
    model = ScriptedRouter(
        [
            call("delete_file", path="/workspace/old.txt"),
            final("I deleted old.txt.", [("delete_file", "/workspace/old.txt")]),
        ]
    )
    async with assemble(load_settings(environ=env), models=model) as app:
        phone = MemoryChannel()
        await app.attach(phone)
        (app.home / "workspace" / "old.txt").write_text("bye\n")
        approval = await say(app, phone, "delete old.txt")
        assert [b.label for b in approval.buttons] == ["Approve", "Deny"]
        await say(app, phone, "/stop")
        denied = ReceiptQuery(action_type="approval_denied")
        async with asyncio.timeout(10):
            while not (await app.ledger.page(denied)).receipts:  # noqa: ASYNC110 (no event to await)
                await asyncio.sleep(0.02)
        text = await browse(app, "/receipts")

    story = next(s for s in text.split('<li class="story"')[1:] if "delete old.txt" in s)
    assert "denied (withdrawn: owner stopped the request via memory)" in story
    assert (app.home / "workspace" / "old.txt").exists()
