"""Google Chat's health: pushes failing persistently and certificates out of reach degrade
it (with short reasons that never carry a URL or key), and the dead-man's switch works both
ways between Google Chat and Telegram."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp
import pytest

from bot.channels.gchat.health import CERTS_UNAVAILABLE
from core.errors import DeliveryDeferred, DeliveryFailed
from core.events import Card, CardKind
from tests.bot.channels.telegram.harness import OWNER as TG_OWNER
from tests.bot.channels.telegram.harness import eventually
from tests.fakes.gchat import FakeGoogle, texts
from tests.fakes.telegram import FakeTelegram

from .harness import SPACE, Running, running, settings_for

DEGRADED, RECOVERED = "Health degraded", "Recovered: every health check passes"


def note(body: str) -> Card:
    return Card(kind=CardKind.NOTICE, title="Note", body=body)


def in_gchat(google: FakeGoogle) -> list[str]:
    """Every text the owner's space shows."""
    return [t for m in google.in_space(SPACE) for t in texts(m.body)]


def in_telegram(tg: FakeTelegram) -> list[str]:
    return [m["plain_text"] for m in tg.messages_in(TG_OWNER)]


async def reasons(lancelot: Running) -> list[str]:
    return list((await lancelot.app.health.check()).degraded_reasons)


async def until_healthy(lancelot: Running, within: float = 5.0) -> None:
    async with asyncio.timeout(within):
        while await reasons(lancelot):  # noqa: ASYNC110 (health is polled; nothing signals)
            await asyncio.sleep(0.05)


async def test_failing_pushes_degrade_gchat_and_the_alert_goes_to_telegram(
    google: FakeGoogle, tg: FakeTelegram, tmp_path: Path
) -> None:
    settings = settings_for(
        google, tmp_path / "home", tg=tg, LANCELOT_GCHAT_PUSH_FAILING_SECONDS="0"
    )
    async with running(google, settings, tg=tg) as lancelot:
        await lancelot.app.health.tick()  # healthy to begin with
        google.outage = 503
        with pytest.raises(DeliveryDeferred):  # queued; the outbox keeps trying
            await lancelot.app.bus.send("gchat", SPACE, note("while Chat is down"))
        await eventually(lambda: len(google.calls) >= 3)
        degraded = await reasons(lancelot)
        await lancelot.app.health.tick()
        await tg.wait_for(lambda: any(DEGRADED in t for t in in_telegram(tg)))

        google.outage = None  # Chat is back: the queued card goes out, pushes work again
        await google.wait_for(lambda: any("while Chat is down" in t for t in in_gchat(google)))
        healed = await reasons(lancelot)
        await lancelot.app.health.tick()
        await google.wait_for(lambda: any(RECOVERED in t for t in in_gchat(google)))
        await tg.wait_for(lambda: any(RECOVERED in t for t in in_telegram(tg)))

    assert degraded == ["gchat: pushes failing (messages.create: HTTP 503)"]
    assert healed == []
    assert not any(DEGRADED in t for t in in_gchat(google))  # never told through the dead one
    assert sum(DEGRADED in t for t in in_telegram(tg)) == 1


async def test_a_revoked_webhook_degrades_without_showing_its_key(
    google: FakeGoogle, tmp_path: Path
) -> None:
    settings = settings_for(
        google,
        tmp_path / "home",
        api=False,
        webhook=True,
        GCHAT_AUDIENCE="",
        LANCELOT_GCHAT_PUSH_FAILING_SECONDS="0",
    )
    async with running(google, settings) as lancelot:
        key = google.webhook_key
        google.webhook_key = "revoked"  # the webhook was deleted: 403, the outbox gives up
        for n in range(2):
            with pytest.raises(DeliveryFailed):
                await lancelot.app.bus.send("gchat", SPACE, note(f"card {n}"))
            assert await reasons(lancelot) == []  # one or two refusals are not yet a pattern
        with pytest.raises(DeliveryFailed):
            await lancelot.app.bus.send("gchat", SPACE, note("card 3"))
        async with aiohttp.ClientSession() as http:
            ready = await http.get(f"{lancelot.app.web_url}/health/ready")
            body = await ready.text()

    assert ready.status == 503
    assert "gchat: pushes failing (webhook: HTTP 403)" in body
    assert key not in body
    assert google.webhook_token not in body
    assert "/webhook/" not in body


async def test_unreachable_certificates_degrade_until_they_can_be_fetched(
    google: FakeGoogle, tmp_path: Path
) -> None:
    google.certs_down = True
    async with running(google, settings_for(google, tmp_path / "home")) as lancelot:
        down = await reasons(lancelot)
        answer = await lancelot.owner.post(lancelot.owner.message_event("/help")[0])
        google.certs_down = False
        up = await reasons(lancelot)
        again = await lancelot.owner.post(lancelot.owner.message_event("/help")[0])

    assert down == [CERTS_UNAVAILABLE]
    assert answer.status == 503  # verification impossible: Google is asked to retry
    assert up == []
    assert again.status == 200


async def test_telegram_watchdog_alert_goes_to_google_chat(
    google: FakeGoogle, tg: FakeTelegram, tmp_path: Path
) -> None:
    settings = settings_for(
        google, tmp_path / "home", tg=tg, LANCELOT_TELEGRAM_WATCHDOG_SECONDS="1"
    )
    async with running(google, settings, tg=tg) as lancelot:
        assert lancelot.telegram is not None
        assert lancelot.telegram.poller is not None
        poller = lancelot.telegram.poller
        await lancelot.app.health.tick()
        tg.go_down()
        await eventually(lambda: poller.restarts >= 1)
        silent = await reasons(lancelot)
        await lancelot.app.health.tick()
        await google.wait_for(lambda: any(DEGRADED in t for t in in_gchat(google)))

        tg.come_back()
        await eventually(lambda: tg.is_polling)
        await until_healthy(lancelot)  # a long poll must end well first
        await lancelot.app.health.tick()
        await google.wait_for(lambda: any(RECOVERED in t for t in in_gchat(google)))
        await tg.wait_for(lambda: any(RECOVERED in t for t in in_telegram(tg)))

    assert silent[0].startswith("telegram: no updates received for ")
    assert not any(DEGRADED in t for t in in_telegram(tg))
    assert sum(DEGRADED in t for t in in_gchat(google)) == 1
