"""Delivery that survives trouble: 429s, 5xx, a minute-long outage, a restart, a block."""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from core.delivery.outbox import DeliveryPolicy
from core.errors import DeliveryDeferred, DeliveryFailed
from core.events import Card, CardKind
from tests.fakes.clock import LeapingClock
from tests.fakes.telegram import FakeTelegram

from .harness import OWNER, QUICK, running, settings_for

# Production's pacing and backoff, in virtual time.
PRODUCTION = DeliveryPolicy()
# Retries quickly but never gives up during a test, and send() stops waiting soon.
PATIENT = replace(QUICK, max_attempts=1_000_000, first_attempt_wait=0.5)


def sends(tg: FakeTelegram) -> list[int]:
    """HTTP statuses of every sendMessage, in order."""
    return [c.status for c in tg.calls if c.method == "sendMessage"]


def card(title: str, body: str = "") -> Card:
    return Card(kind=CardKind.NOTICE, title=title, body=body)


async def test_a_429_waits_retry_after_then_delivers_once(tg: FakeTelegram, tmp_path: Path) -> None:
    clock = LeapingClock()
    async with running(tg, settings_for(tg, tmp_path), policy=PRODUCTION, clock=clock) as lancelot:
        tg.fail_next("sendMessage", 429, retry_after=7)
        started = clock.now
        ref = await lancelot.app.bus.send("telegram", str(OWNER), card("Digest"))

    assert clock.now - started >= 7
    assert sends(tg) == [429, 200]
    assert [m["plain_text"] for m in tg.sent] == ["Digest"]
    assert ref.message_id == str(tg.sent[0]["message_id"])


async def test_server_errors_are_retried_with_backoff(tg: FakeTelegram, tmp_path: Path) -> None:
    clock = LeapingClock()
    async with running(tg, settings_for(tg, tmp_path), policy=PRODUCTION, clock=clock) as lancelot:
        tg.fail_next("sendMessage", 500, times=3)
        with pytest.raises(DeliveryDeferred):
            await lancelot.app.bus.send("telegram", str(OWNER), card("Alert"))
        await tg.wait_for_sent(1)

    assert sends(tg) == [500, 500, 500, 200]
    assert clock.slept >= 0.8 + 1.6 + 3.2  # 1 s, 2 s, 4 s, less jitter
    assert [m["plain_text"] for m in tg.sent] == ["Alert"]


async def test_a_minute_long_outage_loses_nothing_and_doubles_nothing(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    clock = LeapingClock()
    cards = [
        Card(kind=CardKind.APPROVAL, title="Approve rm -rf build?", body="Waiting for you"),
        card("Morning digest", "\n\n".join(f"item {i} " + "x" * 300 for i in range(20))),
        card("Disk almost full"),
    ]
    async with running(tg, settings_for(tg, tmp_path), policy=PRODUCTION, clock=clock) as lancelot:
        tg.go_down()
        clock.at(clock.now + 60, tg.come_back)
        outcomes = await asyncio.gather(
            *(lancelot.app.bus.send("telegram", str(OWNER), c) for c in cards),
            return_exceptions=True,
        )
        await tg.wait_for_sent(4)
        reply = await lancelot.say("/help")  # polling recovered too
        failures = await lancelot.receipts("delivery")

    assert clock.slept >= 60
    assert isinstance(outcomes[0], DeliveryDeferred)
    assert 502 in sends(tg)
    texts = [m["plain_text"] for m in tg.sent]
    assert texts[0] == "Approve rm -rf build?\n\nWaiting for you"
    assert texts[1].startswith("Morning digest")
    assert texts[2].startswith("item")  # the digest's second part
    assert texts[3] == "Disk almost full"
    assert reply["plain_text"].startswith("Commands")
    assert max(Counter(texts).values()) == 1
    assert failures == []


async def test_a_restart_resumes_undelivered_cards_and_sends_each_once(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    settings = settings_for(tg, tmp_path)
    async with running(tg, settings, policy=PATIENT) as first_run:
        await first_run.app.bus.send("telegram", str(OWNER), card("Delivered before"))
        tg.go_down()
        for title in ("Approval card", "Digest card"):
            with pytest.raises(DeliveryDeferred):
                await first_run.app.bus.send("telegram", str(OWNER), card(title))
    tg.come_back()
    assert [m["plain_text"] for m in tg.sent] == ["Delivered before"]

    async with running(tg, settings, policy=PATIENT) as second_run:
        await tg.wait_for_sent(3)
        reply = await second_run.say("/help")

    assert [m["plain_text"] for m in tg.sent][:3] == [
        "Delivered before",
        "Approval card",
        "Digest card",
    ]
    assert reply["plain_text"].startswith("Commands")
    assert len(tg.sent) == 4


async def test_a_blocked_chat_fails_at_once_with_a_receipt(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    async with running(tg, settings_for(tg, tmp_path), policy=QUICK) as lancelot:
        tg.fail_next("sendMessage", 403)
        with pytest.raises(DeliveryFailed) as caught:
            await lancelot.app.bus.send("telegram", str(OWNER), card("Anyone there?"))
        [receipt] = await lancelot.receipts("delivery")

    assert not isinstance(caught.value, DeliveryDeferred)
    assert sends(tg) == [403]
    assert receipt.status == "failure"
    assert "blocked" in (receipt.error_message or "")


async def test_an_edit_that_changes_nothing_counts_as_delivered(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    async with running(tg, settings_for(tg, tmp_path)) as lancelot:
        original = card("Approved by owner", "rm build.log")
        ref = await lancelot.app.bus.send("telegram", str(OWNER), original)
        await lancelot.app.outbox.edit(ref, replace(original))  # the very same content
        failures = await lancelot.receipts("delivery")

    edits = [c.status for c in tg.calls if c.method == "editMessageText"]
    assert edits == [400]  # Telegram said "message is not modified"...
    assert failures == []  # ...and that is success, not a failed delivery
    [message] = tg.sent
    assert (message["plain_text"], message["edits"]) == ("Approved by owner\n\nrm build.log", 0)
