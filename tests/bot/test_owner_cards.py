"""Every card and page that shows the owner a time shows it in the owner's timezone (Asia/Tokyo
here, nine hours from UTC, so a UTC time cannot pass for it), calls the owner by the name they
gave in onboarding, and never prints a UTC or ISO time."""

from __future__ import annotations

import html
import re
import time
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import aiohttp

from bot.app import Lancelot
from bot.channels.registry import CHANNELS
from bot.pairing import OwnerBook
from core.config import load_settings
from core.events import Card, CardKind
from core.governance.approvals import ApprovalState
from core.receipts.base import ReceiptQuery
from core.security.owner_view import OwnerView
from tests.fakes.calendar import CalendarClock, utc
from tests.fakes.channel import MemoryChannel
from tests.fakes.owner import say, tap
from tests.fakes.scheduled_app import scheduled_app, write_jobs
from tests.fakes.workspace import put

TOKYO = {"LANCELOT_TIMEZONE": "Asia/Tokyo"}
ZONE = ZoneInfo("Asia/Tokyo")
UTC_TIME = re.compile(r"UTC|\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}|\+00:00")
JOBS = """
  nightly:
    run: builtin:health_sweep
    cron: "0 3 * * *"
"""


def text(card: Card) -> str:
    """Everything a card shows: title, body, fields."""
    return "\n".join([card.title, card.body, *(f"{k}: {v}" for k, v in card.fields)])


def shown_well(card: Card) -> str:
    """The card's text, once it is known to hold no UTC or ISO time."""
    shown = text(card)
    assert not UTC_TIME.search(shown), shown
    return shown


def tokyo(ts: float) -> str:
    """HH:MM of `ts` on a Tokyo wall clock."""
    return datetime.fromtimestamp(ts, ZONE).strftime("%H:%M")


def tokyo_now() -> set[str]:
    """HH:MM in Tokyo now (and a minute ago, should the minute turn during the test)."""
    now = time.time()
    return {tokyo(now), tokyo(now - 60)}


async def named_ada(app: Lancelot, phone: MemoryChannel) -> None:
    """Onboarding as a new owner goes through it: a name, no provider, the rest skipped."""
    await say(app, phone, "/start")
    provider = await say(app, phone, "Ada")
    await tap(app, phone, provider, "Continue")
    await phone.next_card()
    assert (await say(app, phone, "SKIP")).title == "Onboarding skipped"


async def test_approval_undo_and_receipt_page_speak_tokyo_time_and_the_owners_name(
    tmp_path: Path, docker_image: str
) -> None:
    phone = MemoryChannel()
    jobs = write_jobs(tmp_path / "jobs.yaml", JOBS)
    clock = CalendarClock(time.time())
    async with scheduled_app(
        tmp_path / "home", clock, jobs, channels=(phone,), env=TOKYO, web=True
    ) as app:
        await named_ada(app, phone)
        put(app.home / "workspace" / "old" / "f.txt")
        pending = await say(app, phone, "/run rm -rf /workspace/old", wait=60)
        assert pending.kind is CardKind.APPROVAL
        assert app.governance is not None
        [asked] = await app.governance.approval_store.in_states(ApprovalState.PENDING)
        valid = dict(pending.fields)["Valid until"]
        assert valid.startswith(tokyo(asked.expires_at)) or tokyo(asked.expires_at) in valid
        assert datetime.fromtimestamp(asked.expires_at, UTC).strftime("%H:%M") not in valid
        shown_well(pending)

        decided = await tap(app, phone, pending, "Approve")
        assert decided is not None
        body = shown_well(decided)
        assert any(f"Approved by Ada at {hhmm} via memory" in body for hhmm in tokyo_now())

        listing = shown_well(await say(app, phone, "/undo"))
        assert "Undo until tomorrow " in listing
        assert "(in 1 day)" in listing
        assert any(f"1. {hhmm} " in listing for hhmm in tokyo_now())

        await app.ledger.flush()
        [receipt] = (await app.ledger.page(ReceiptQuery(action_type="approval_granted"))).receipts
        page = await _page(app, f"/receipts/{receipt.id}")
        stamp = datetime.fromisoformat(receipt.timestamp.replace("Z", "+00:00")).timestamp()
        assert f"<dt>Time</dt><dd>{tokyo(stamp)}</dd>" in page
        stories = await _page(app, "/receipts")
        assert f'<span class="abs-time">{tokyo(stamp)}</span>' in stories or any(
            f'<span class="abs-time">{hhmm}</span>' in stories for hhmm in tokyo_now()
        )
        assert " by Ada on memory" in stories


async def _page(app: Lancelot, path: str) -> str:
    """A receipt page as the signed-in owner's browser gets it."""
    jar = aiohttp.CookieJar(unsafe=True)
    async with aiohttp.ClientSession(cookie_jar=jar) as http:
        token = await app.viewer.issue_link()
        async with http.get(f"{app.web_url}/receipts", params={"t": token}) as signed:
            assert signed.status == 200
        async with http.get(f"{app.web_url}{path}") as response:
            assert response.status == 200
            return html.unescape(await response.text())


class Failing:
    """A health check that fails until the test says otherwise."""

    def __init__(self) -> None:
        self.reason: str | None = "widget: stuck"

    async def __call__(self) -> str | None:
        return self.reason


async def test_jobs_digest_health_and_alerts_speak_tokyo_time(tmp_path: Path) -> None:
    # 20:30 UTC on the 23rd is 05:30 on the 24th in Tokyo: dates and hours differ.
    clock = CalendarClock(utc(2026, 11, 23, 20, 30))
    phone = MemoryChannel()
    jobs = write_jobs(tmp_path / "jobs.yaml", JOBS)
    async with scheduled_app(tmp_path / "home", clock, jobs, channels=(phone,), env=TOKYO) as app:
        await named_ada(app, phone)
        listing = text(await say(app, phone, "/jobs"))
        # 03:00 UTC tomorrow (the job's own zone, named as such) is noon today in Tokyo.
        assert "nightly (cron 0 3 * * * (UTC)): next 12:00;" in listing
        assert not UTC_TIME.search(listing.replace("(UTC)", ""))

        await say(app, phone, "/digest")
        digest = next(c for _, c in phone.delivered if c.kind is CardKind.DIGEST)
        shown_well(digest)
        assert dict(digest.fields)["Period"] == "yesterday 05:30 to 05:30"

        shown_well(await say(app, phone, "/health"))

        widget = Failing()
        app.health.register("widget", widget)
        await app.health.tick()
        alert = [c for _, c in phone.delivered if c.kind is CardKind.ALERT][-1]
        shown_well(alert)
        assert dict(alert.fields)["Since"] == "05:30"
        details = await tap(app, phone, alert, "Details")
        assert details is not None
        acked = await tap(app, phone, details, "Acknowledge")
        assert acked is not None
        assert "Acknowledged by Ada." in acked.body
        widget.reason = None
        await app.health.tick()
        widget.reason = "widget: stuck again"
        await app.health.tick()
        again = [c for _, c in phone.delivered if c.kind is CardKind.ALERT][-1]
        muted = await tap(app, phone, again, "Mute 1 h")
        assert muted is not None
        assert "Alerts muted until 06:30 (in 1 h)" in shown_well(muted)


def test_status_names_the_owner_by_the_name_given_with_the_id_beside_it(
    tmp_path: Path,
) -> None:
    settings = load_settings(environ={"TELEGRAM_BOT_TOKEN": "1:x", "TELEGRAM_OWNER_ID": "1001"})
    book = OwnerBook(settings, tmp_path, channels=list(CHANNELS))
    owner = OwnerView("Asia/Tokyo")
    assert book.describe(owner).startswith("Telegram: 1001 (from settings)")
    owner.follow(zone=lambda: None, name=lambda: "Ada")
    assert book.describe(owner).startswith("Telegram: Ada (1001, from settings)")
