"""The calls that skip PTB's objects: a send answers only its message id, and the inbox keeps
each update as the JSON Telegram sent."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from telegram import InlineKeyboardButton, InlineKeyboardMarkup, LinkPreviewOptions, Update

from bot.channels.telegram.application import LancelotBot
from bot.channels.telegram.arrivals import Arrivals, Received
from bot.channels.telegram.poller import Poller
from bot.channels.telegram.transport import AiohttpRequest
from core.delivery.inbox import UpdateInbox
from core.delivery.writer import StateWriter
from core.errors import DeliveryRejected
from core.receipts.ledger import SqliteLedger
from core.state import open_state_db

TOKEN = "123:not-a-real-token"
NO_PREVIEW = LinkPreviewOptions(is_disabled=True)


class Api:
    """A Bot API whose sendMessage answers `result`, remembering what it was sent."""

    def __init__(self) -> None:
        self.result: Any = {"message_id": 41, "date": 0, "chat": {"id": 42, "type": "private"}}
        self.sent: list[dict[str, Any]] = []

    async def handle(self, request: web.Request) -> web.Response:
        self.sent.append(await request.json())
        return web.json_response({"ok": True, "result": self.result})


@pytest.fixture
async def api() -> AsyncIterator[tuple[Api, LancelotBot]]:
    fake = Api()
    app = web.Application()
    app.router.add_post("/bot{token}/sendMessage", fake.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    bot = LancelotBot(TOKEN, base_url=f"http://127.0.0.1:{port}/bot", request=AiohttpRequest())
    await bot.request.initialize()
    yield fake, bot
    await bot.request.shutdown()
    await runner.cleanup()


async def test_a_send_answers_the_new_message_id(api: tuple[Api, LancelotBot]) -> None:
    fake, bot = api
    markup = InlineKeyboardMarkup([[InlineKeyboardButton("Approve", callback_data="a:1")]])
    sent = await bot.send_message_id(
        42, "<b>hi</b>", parse_mode="HTML", reply_markup=markup, link_preview_options=NO_PREVIEW
    )
    assert sent == 41
    assert fake.sent == [
        {
            "chat_id": 42,
            "text": "<b>hi</b>",
            "parse_mode": "HTML",
            "reply_markup": {"inline_keyboard": [[{"text": "Approve", "callback_data": "a:1"}]]},
            "link_preview_options": {"is_disabled": True},
        }
    ]


async def test_an_answer_without_a_message_id_is_not_sent_again(
    api: tuple[Api, LancelotBot],
) -> None:
    """Telegram took the message: retrying would show it twice, so it is a refusal."""
    fake, bot = api
    fake.result = True
    with pytest.raises(DeliveryRejected, match="without a message id"):
        await bot.send_message_id(
            42, "hi", parse_mode=None, reply_markup=None, link_preview_options=NO_PREVIEW
        )
    assert [call["text"] for call in fake.sent] == ["hi"]
    assert "parse_mode" not in fake.sent[0]  # None is left out, not sent as null


async def test_an_update_is_kept_as_telegram_sent_it(tmp_path: Path) -> None:
    """A field this PTB does not know (a newer Bot API's) survives into the replay."""
    data = {
        "update_id": 500,
        "message": {
            "message_id": 9,
            "date": 0,
            "chat": {"id": 42, "type": "private"},
            "from": {"id": 42, "is_bot": False, "first_name": "Owner"},
            "text": "héllo",
            "future_field": {"x": 1},
        },
    }
    bot = LancelotBot(TOKEN)
    handed: list[Update] = []

    async def hand_on(update: Update) -> None:
        handed.append(update)

    async with AsyncExitStack() as stack:
        state = await open_state_db(tmp_path / "state.db")
        stack.push_async_callback(state.close)
        ledger = await stack.enter_async_context(SqliteLedger(tmp_path / "ledger.db"))
        writer = await stack.enter_async_context(StateWriter(tmp_path / "state.db"))
        inbox = UpdateInbox(state, writer, ledger)
        await inbox.setup()
        arrivals = Arrivals(inbox, bot, hand_on)
        await arrivals.take([Received(Update.de_json(data, bot), data)])
        [kept] = (await inbox.unfinished("telegram")).replay
        assert json.loads(kept.payload) == data
        await arrivals.replay()  # as after a crash: handed on again, from what was kept
    first, again = handed
    assert first.update_id == again.update_id == 500
    assert again.message is not None
    assert again.message.text == "héllo"
    assert again.message.api_kwargs == {"future_field": {"x": 1}}


class OddApi:
    """getUpdates answering something that is not a list of updates (no Telegram does)."""

    def __init__(self) -> None:
        self.calls = 0
        self.read_timeout = 5.0

    async def get_updates_raw(self, *args: object, **kwargs: object) -> object:
        self.calls += 1
        return {"not": "a list"}


async def test_an_answer_that_is_not_a_list_is_retried_after_a_pause() -> None:
    odd = OddApi()
    kept: list[object] = []

    async def sink(batch: object) -> None:
        kept.append(batch)

    poller = Poller(odd, odd, sink, watchdog=60, backoff_base=0.2, backoff_cap=0.2)  # type: ignore[arg-type]
    await poller.start()
    await asyncio.sleep(0.5)
    await poller.stop()
    assert 1 <= odd.calls <= 5  # paced by the backoff, not a tight loop
    assert kept == []


class Batches(OddApi):
    """getUpdates answering one batch, then nothing."""

    def __init__(self, batch: list[object]) -> None:
        super().__init__()
        self.batches = [batch]
        self.offsets: list[object] = []

    async def get_updates_raw(self, *args: object, **kwargs: object) -> object:
        self.offsets.append(args[0])
        await asyncio.sleep(0.01)
        return self.batches.pop() if self.batches else []


async def test_an_update_without_an_id_is_skipped_and_the_rest_confirmed() -> None:
    good = {
        "update_id": 8,
        "message": {"message_id": 1, "date": 0, "chat": {"id": 42, "type": "private"}},
    }
    api = Batches([{"message": {"text": "no id"}}, good])
    kept: list[int] = []

    async def sink(batch: list[Received]) -> None:
        kept.extend(received.update.update_id for received in batch)

    poller = Poller(api, api, sink, watchdog=60)  # type: ignore[arg-type]
    await poller.start()
    await asyncio.sleep(0.1)
    await poller.stop()
    assert kept == [8]
    assert api.offsets[:2] == [None, 9]
