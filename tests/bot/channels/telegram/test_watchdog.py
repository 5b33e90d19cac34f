"""The polling watchdog: silence past the limit degrades health and restarts the poller."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp
import pytest

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


async def test_a_bot_api_unreachable_at_start_is_waited_for_not_a_reason_to_stop(
    tg: FakeTelegram, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    tg.go_down()  # a machine that starts before its network, or during an outage

    async def start_and_ask() -> str:
        async with running(tg, settings_for(tg, tmp_path / "home")) as lancelot:
            return (await lancelot.say("/help"))["plain_text"]

    first_start = asyncio.create_task(start_and_ask())
    for _ in range(300):  # its first try fails (later on a loaded machine than on a quiet one)
        if "telegram: cannot reach the Bot API yet" in caplog.text:
            break
        await asyncio.sleep(0.1)
    assert "telegram: cannot reach the Bot API yet" in caplog.text
    await asyncio.sleep(0.5)
    assert not first_start.done()  # still trying, not stopped
    tg.come_back()
    answer = await asyncio.wait_for(first_start, 30)

    assert "/status" in answer
