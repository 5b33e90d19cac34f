"""The polling watchdog: silence past the limit degrades health and restarts the poller."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp

from tests.fakes.telegram import FakeTelegram

from .harness import eventually, running, settings_for


async def readiness(http: aiohttp.ClientSession, url: str) -> tuple[int, list[str]]:
    async with http.get(url) as response:
        return response.status, (await response.json())["degraded_reasons"]


async def test_silence_degrades_health_restarts_polling_and_recovers(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    settings = settings_for(tg, tmp_path, LANCELOT_TELEGRAM_WATCHDOG_SECONDS="1")
    async with running(tg, settings) as lancelot, aiohttp.ClientSession() as http:
        poller = lancelot.channel.poller
        assert poller is not None
        url = f"{lancelot.app.web_url}/health/ready"
        healthy = await readiness(http, url)

        tg.go_down()
        await eventually(lambda: poller.restarts >= 1)
        degraded = await readiness(http, url)

        tg.come_back()
        await eventually(lambda: tg.is_polling)
        await asyncio.sleep(0.4)  # one long poll (a third of the watchdog) ends well
        recovered = await readiness(http, url)
        reply = await lancelot.say("/help")

    assert healthy == (200, [])
    assert degraded[0] == 503
    [reason] = degraded[1]
    assert reason.startswith("telegram: no updates received for ")
    assert reason.endswith(" s")
    assert recovered == (200, [])
    assert reply["plain_text"].startswith("Commands")
