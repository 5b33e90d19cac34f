"""The watchdog against the fake Bot API, with beats written here: quiet while they come,
one message when they stop, one when they resume, to the owner only and through sendMessage
only; a 429 or an outage delays the message but never doubles it; a refused token is not
tried forever; what it shows of the log is redacted."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest
from pydantic import SecretStr

from bot.watchdog.config import GchatAddress, TelegramAddress, WatchdogConfig
from bot.watchdog.message import BACK_MARK, DOWN_MARK, LOG_FILE
from bot.watchdog.process import watch_lancelot
from core.health.heartbeat import Heartbeat, write_heartbeat
from core.security.owners import OwnerStore, PairedOwner
from tests.fakes.gchat import FakeGoogle
from tests.fakes.telegram import FakeTelegram

OWNER = 1001
AFTER = 0.8  # seconds of silence; the watchdog reads every 0.2 s
WAIT = 10.0


class Beats:
    """Beats into a home every 0.1 s, as a running Lancelot would, until stopped."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self._task: asyncio.Task[None] | None = None

    def start(self, pid: int) -> None:
        self._task = asyncio.create_task(self._beat(pid))

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _beat(self, pid: int) -> None:
        count = 0
        while True:
            count += 1
            write_heartbeat(self.home, Heartbeat(pid, 1000.0, 1000.0 + count, count, 0.1))
            await asyncio.sleep(0.1)


@contextlib.asynccontextmanager
async def watchdog(config: WatchdogConfig) -> AsyncIterator[None]:
    stop = asyncio.Event()
    task = asyncio.create_task(watch_lancelot(config, stop))
    try:
        yield
    finally:
        stop.set()
        await task


def config_for(home: Path, tg: FakeTelegram, owners: tuple[int, ...] = (OWNER,)) -> WatchdogConfig:
    address = TelegramAddress(tg.base_url, SecretStr(tg.token), owners)
    return WatchdogConfig(home=home, after=AFTER, telegram=address, gchat=None)


@pytest.fixture
async def beats(tmp_path: Path) -> AsyncIterator[Beats]:
    beats = Beats(tmp_path)
    yield beats
    await beats.stop()


async def test_the_owner_hears_once_when_beats_stop_and_once_when_they_resume(
    tmp_path: Path, beats: Beats
) -> None:
    beats.start(pid=41)
    async with FakeTelegram() as tg, watchdog(config_for(tmp_path, tg)):
        await asyncio.sleep(3 * AFTER)
        assert tg.sent == []  # beating: nothing to say
        await beats.stop()
        down = (await tg.wait_for_sent(1, WAIT))[0]
        await asyncio.sleep(3 * AFTER)
        assert len(tg.sent) == 1  # once per outage
        beats.start(pid=42)
        await tg.wait_for_sent(2, WAIT)
        await asyncio.sleep(3 * AFTER)
        back = tg.sent[1]
        assert len(tg.sent) == 2
        calls = tg.calls
    assert DOWN_MARK in down["text"]
    assert "pid 41" in down["text"]
    assert BACK_MARK in back["text"]
    assert "pid 42" in back["text"]
    assert [(m["chat_id"], m["parse_mode"], m["reply_markup"]) for m in tg.sent] == [
        (OWNER, None, None),
        (OWNER, None, None),
    ]
    assert {call.method for call in calls} == {"sendMessage"}


async def test_its_times_are_the_owners_not_utc(tmp_path: Path, beats: Beats) -> None:
    beats.start(pid=43)
    async with FakeTelegram() as tg:
        tokyo = replace(config_for(tmp_path, tg), zone="Asia/Tokyo")
        async with watchdog(tokyo):
            await asyncio.sleep(2 * AFTER)
            await beats.stop()
            down = (await tg.wait_for_sent(1, WAIT))[0]
    # The beats say Lancelot started at epoch 1000: 00:16 UTC, 09:16 in Tokyo.
    assert "(pid 43, running since 1 Jan 1970 09:16)" in down["text"]
    assert "UTC" not in down["text"]


async def test_the_last_log_line_is_shown_with_its_secrets_masked(
    tmp_path: Path, beats: Beats
) -> None:
    async with FakeTelegram() as tg:
        (tmp_path / LOG_FILE).parent.mkdir()
        (tmp_path / LOG_FILE).write_text(
            "2025-01-01 10:00:00 INFO x: started\n"
            "2025-01-01 10:00:01 ERROR bot.channels.telegram: "
            f"call to /bot{tg.token}/getMe failed\n\n"
        )
        beats.start(pid=41)
        async with watchdog(config_for(tmp_path, tg)):
            await asyncio.sleep(AFTER / 2)
            await beats.stop()
            text = (await tg.wait_for_sent(1, WAIT))[0]["text"]
    assert "Last log line: 2025-01-01 10:00:01 ERROR bot.channels.telegram: call to /bot" in text
    assert tg.token not in text
    assert "[REDACTED]" in text


async def test_a_429_and_an_outage_delay_the_message_but_never_double_it(
    tmp_path: Path,
) -> None:
    async with FakeTelegram() as tg:
        tg.fail_next("sendMessage", 429, retry_after=1)
        tg.fail_next("sendMessage", 502)
        async with watchdog(config_for(tmp_path, tg)):  # no beat at all: down after AFTER
            await tg.wait_for_sent(1, WAIT)
            await asyncio.sleep(3 * AFTER)
        statuses = [call.status for call in tg.calls]
    assert statuses == [429, 502, 200]
    assert len(tg.sent) == 1
    assert "none since the watchdog started" in tg.sent[0]["text"]


async def test_without_an_owner_id_it_tells_the_owner_who_paired(tmp_path: Path) -> None:
    async with FakeTelegram() as tg, watchdog(config_for(tmp_path, tg, owners=())):
        await asyncio.sleep(2 * AFTER)
        assert tg.calls == []  # nobody paired yet: nobody to tell
        OwnerStore(tmp_path).save(PairedOwner("telegram", "2002", "Ada", "2025-01-01"))
        await tg.wait_for_sent(1, WAIT)
    assert [m["chat_id"] for m in tg.sent] == [2002]


async def test_a_refused_token_is_logged_once_and_not_tried_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    refused = "refused the message for good: telegram: sendMessage: HTTP 401"
    async with FakeTelegram() as tg:
        wrong = TelegramAddress(tg.base_url, SecretStr("999:wrong-token"), (OWNER,))
        with caplog.at_level(logging.INFO):
            async with watchdog(WatchdogConfig(tmp_path, AFTER, wrong, None)):
                await asyncio.sleep(6 * AFTER)  # told at AFTER; refused, then left alone
    assert caplog.text.count(refused) == 1
    assert tg.sent == []
    assert "wrong-token" not in caplog.text


async def test_an_owner_who_has_the_message_does_not_get_it_again_when_another_is_retried(
    tmp_path: Path,
) -> None:
    async with FakeTelegram() as tg:
        tg.fail_next("sendMessage", 502)  # the first owner's try
        async with watchdog(config_for(tmp_path, tg, owners=(OWNER, 2002))):
            await tg.wait_for_sent(2, WAIT)
            await asyncio.sleep(4 * AFTER)
    assert sorted(m["chat_id"] for m in tg.sent) == [OWNER, 2002]


async def test_google_chat_is_told_too_through_its_webhook(tmp_path: Path) -> None:
    async with FakeTelegram() as tg, FakeGoogle() as google:
        config = config_for(tmp_path, tg)
        webhook = GchatAddress(SecretStr(google.webhook_url), None, None, google.api_base_url)
        both = WatchdogConfig(tmp_path, AFTER, config.telegram, webhook)
        async with watchdog(both):
            await google.wait_for(lambda: google.messages, WAIT)
            await tg.wait_for_sent(1, WAIT)
            await asyncio.sleep(3 * AFTER)
        [message] = google.messages.values()
    assert DOWN_MARK in message.body["text"]
    assert message.via == "webhook"
    assert len(tg.sent) == 1


async def test_google_chat_is_told_through_the_chat_api_into_its_space(tmp_path: Path) -> None:
    async with FakeTelegram() as tg, FakeGoogle() as google:
        account = google.write_service_account(tmp_path / "sa.json")
        api = GchatAddress(None, account, "spaces/OWNER", google.api_base_url)
        async with watchdog(WatchdogConfig(tmp_path, AFTER, None, api)):
            await google.wait_for(lambda: google.messages, WAIT)
            await asyncio.sleep(3 * AFTER)
        [message] = google.in_space("spaces/OWNER")
    assert DOWN_MARK in message.body["text"]
    assert message.via == "api"
    assert message.request_id.startswith("lancelot-watchdog-down-")
    assert tg.calls == []
