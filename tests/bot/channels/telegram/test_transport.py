"""Bot API calls over aiohttp: one JSON object each (uploads a multipart form), errors as PTB's."""

from __future__ import annotations

import asyncio
import json
import socket
import ssl
from base64 import b64encode
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web
from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup
from telegram.error import NetworkError, TimedOut

from bot.channels.telegram.application import TelegramTuning, build_application
from bot.channels.telegram.transport import POOL_FULL, UPLOAD_RATE, AiohttpRequest, call_timeout
from core.config.settings import TelegramSettings
from tests.fakes.gchat.keys import SigningKey
from tests.fakes.telegram import FakeTelegram
from tests.fakes.telegram.server import DEFAULT_USER_ID

TOKEN = "123:not-a-real-token"
ME = {"id": 1, "is_bot": True, "first_name": "Lancelot", "username": "lancelot_bot"}
SENT = {"message_id": 7, "date": 0, "chat": {"id": 42, "type": "private"}, "text": "hi"}


class Recorder:
    """A Bot API that remembers each call's content type and body, and can be slow."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, bytes]] = []
        self.headers: list[dict[str, str]] = []
        self.delay = 0.0

    async def handle(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        self.seen.append((method, request.content_type, await request.read()))
        self.headers.append(dict(request.headers))
        await asyncio.sleep(self.delay)
        result = ME if method == "getMe" else SENT
        return web.json_response({"ok": True, "result": result})

    async def file(self, request: web.Request) -> web.Response:
        self.seen.append(("GET " + request.match_info["path"], "", b""))
        return web.Response(body=b"\x00voice bytes")


@pytest.fixture
async def recorder() -> AsyncIterator[tuple[Recorder, str]]:
    rec = Recorder()
    app = web.Application()
    app.router.add_post("/bot{token}/{method}", rec.handle)
    app.router.add_get("/file/bot{token}/{path}", rec.file)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    yield rec, f"http://127.0.0.1:{port}/bot"
    await runner.cleanup()


async def _bot(base_url: str, token: str = TOKEN, **request: Any) -> Bot:
    bot = Bot(token, base_url=base_url, request=AiohttpRequest(**request))
    await bot.initialize()
    return bot


async def test_a_message_with_buttons_is_one_json_object(recorder: tuple[Recorder, str]) -> None:
    rec, base = recorder
    bot = await _bot(base)
    markup = InlineKeyboardMarkup([[InlineKeyboardButton("Approve", callback_data="a:1")]])
    message = await bot.send_message(42, "<b>héllo</b>", parse_mode="HTML", reply_markup=markup)
    await bot.shutdown()
    assert message.message_id == 7
    method, content_type, body = rec.seen[-1]
    assert (method, content_type) == ("sendMessage", "application/json")
    sent = json.loads(body)
    assert sent["chat_id"] == 42
    assert sent["text"] == "<b>héllo</b>"
    # Objects are objects, not JSON inside a string as in PTB's form.
    assert sent["reply_markup"] == {
        "inline_keyboard": [[{"text": "Approve", "callback_data": "a:1"}]]
    }


async def test_an_upload_keeps_the_multipart_form(recorder: tuple[Recorder, str]) -> None:
    rec, base = recorder
    bot = await _bot(base)
    await bot.send_document(42, b"%PDF-1.4 tiny", filename="report.pdf")
    await bot.shutdown()
    method, content_type, body = rec.seen[-1]
    assert (method, content_type) == ("sendDocument", "multipart/form-data")
    assert b"report.pdf" in body
    assert b"%PDF-1.4 tiny" in body


async def test_a_slow_answer_is_timed_out_as_ptb_would(recorder: tuple[Recorder, str]) -> None:
    rec, base = recorder
    bot = await _bot(base, read_timeout=0.2)
    rec.delay = 1.0
    with pytest.raises(TimedOut):
        await bot.send_message(42, "hi")
    with pytest.raises(TimedOut):  # a timeout given by the call wins over the client's
        await bot.send_message(42, "hi", read_timeout=0.05)
    rec.delay = 0.0
    await bot.shutdown()


async def test_an_unreachable_api_is_a_network_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # nothing listens once closed
    request = AiohttpRequest()
    await request.initialize()
    bot = Bot(TOKEN, base_url=f"http://127.0.0.1:{port}/bot", request=request)
    with pytest.raises(NetworkError, match=r"aiohttp\.ClientConnectorError"):
        await bot.send_message(42, "hi")
    await request.shutdown()


async def test_the_fake_bot_api_takes_cards_sent_as_json(tg: FakeTelegram) -> None:
    """The fake refuses an object sent as a string in a JSON body, as Telegram does."""
    bot = await _bot(tg.base_url, tg.token)
    markup = InlineKeyboardMarkup([[InlineKeyboardButton("Deny", callback_data="d:1")]])
    await bot.send_message(DEFAULT_USER_ID, "<i>card</i>", parse_mode="HTML", reply_markup=markup)
    await bot.shutdown()
    assert tg.sent[-1]["plain_text"] == "card"


async def test_a_full_pool_is_a_pool_timeout_and_nothing_is_sent(
    recorder: tuple[Recorder, str],
) -> None:
    """PTB's pool timeout, told apart (the poller replaces its client on it)."""
    rec, base = recorder
    bot = await _bot(base, connection_pool_size=1, pool_timeout=0.1)
    rec.delay = 0.5
    first = asyncio.create_task(bot.send_message(42, "first"))
    await asyncio.sleep(0.05)
    with pytest.raises(TimedOut, match="Pool timeout"):
        await bot.send_message(42, "second")
    await first
    await bot.shutdown()
    assert [json.loads(body)["text"] for _, _, body in rec.seen[1:]] == ["first"]
    assert "Request was *not* sent" in POOL_FULL


async def test_a_client_replaced_mid_call_fails_that_call_and_serves_the_next(
    recorder: tuple[Recorder, str],
) -> None:
    """The poller's watchdog shuts a wedged client down and initializes it again."""
    rec, base = recorder
    request = AiohttpRequest(read_timeout=5.0)
    bot = Bot(TOKEN, base_url=base, request=request)
    await bot.initialize()
    rec.delay = 1.0
    stuck = asyncio.create_task(bot.send_message(42, "stuck"))
    await asyncio.sleep(0.1)
    await request.shutdown()
    await request.initialize()
    with pytest.raises(NetworkError):
        await stuck
    rec.delay = 0.0
    message = await bot.send_message(42, "after")
    assert message.message_id == 7
    await bot.shutdown()


async def test_a_file_is_fetched_with_a_get(recorder: tuple[Recorder, str]) -> None:
    rec, base = recorder
    request = AiohttpRequest()
    await request.initialize()
    url = base.replace("/bot", "/file/bot") + f"{TOKEN}/voice.ogg"
    assert await request.retrieve(url) == b"\x00voice bytes"
    await request.shutdown()
    assert rec.seen == [("GET voice.ogg", "", b"")]


@pytest.fixture
async def tls_api(tmp_path: Any) -> AsyncIterator[str]:
    """The Bot API behind a certificate nobody vouches for."""
    key = SigningKey(subject="127.0.0.1")
    (tmp_path / "cert.pem").write_text(key.certificate_pem)
    (tmp_path / "key.pem").write_text(key.private_pem)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(tmp_path / "cert.pem", tmp_path / "key.pem")
    rec = Recorder()
    app = web.Application()
    app.router.add_post("/bot{token}/{method}", rec.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=context)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    yield f"https://127.0.0.1:{port}/bot"
    await runner.cleanup()


async def test_the_application_verifies_tls_unless_a_test_turns_it_off(tls_api: str) -> None:
    settings = TelegramSettings(bot_token=TOKEN, api_base_url=tls_api)
    app, _ = build_application(settings, TelegramTuning())
    assert isinstance(app.bot.request, AiohttpRequest)
    await app.bot.request.initialize()
    with pytest.raises(NetworkError, match=r"(?i)certificate"):
        await app.bot.send_message(42, "hi")
    await app.bot.request.shutdown()

    app, _ = build_application(settings, TelegramTuning(verify_tls=False))
    await app.bot.request.initialize()
    assert (await app.bot.send_message(42, "hi")).message_id == 7
    await app.bot.request.shutdown()


async def test_a_proxy_named_in_the_environment_carries_the_calls(
    recorder: tuple[Recorder, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """HTTP(S)_PROXY applies as it did under httpx: here the proxy itself answers."""
    rec, base = recorder
    proxy = base.removesuffix("/bot")
    for name in ("HTTP_PROXY", "http_proxy"):
        monkeypatch.setenv(name, proxy)
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    bot = await _bot("http://telegram.invalid/bot")  # reachable only through the proxy
    message = await bot.send_message(42, "via the proxy")
    await bot.shutdown()
    assert message.message_id == 7
    assert json.loads(rec.seen[-1][2])["text"] == "via the proxy"


async def test_no_proxy_exempts_a_host_and_proxy_credentials_are_sent(
    recorder: tuple[Recorder, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    rec, base = recorder
    proxy = base.removesuffix("/bot")
    for name in ("HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    with socket.socket() as sock:  # a proxy nobody listens on, and a host NO_PROXY exempts
        sock.bind(("127.0.0.1", 0))
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{sock.getsockname()[1]}")
    monkeypatch.setenv("NO_PROXY", "localhost,127.0.0.1")
    bot = await _bot(base)
    assert (await bot.send_message(42, "direct")).message_id == 7
    await bot.shutdown()
    assert "Proxy-Authorization" not in rec.headers[-1]

    monkeypatch.setenv("NO_PROXY", "example.org")
    monkeypatch.setenv("HTTP_PROXY", proxy.replace("http://", "http://ow%40ner:s3cret@"))
    bot = await _bot("http://telegram.invalid/bot")
    assert (await bot.send_message(42, "via the proxy")).message_id == 7
    await bot.shutdown()
    assert rec.headers[-1]["Proxy-Authorization"] == "Basic " + b64encode(b"ow@ner:s3cret").decode()


async def test_a_call_takes_no_trip_to_a_worker_thread(
    recorder: tuple[Recorder, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under aiohttp's trust_env each call read the environment and ~/.netrc in a worker
    thread: a thread trip per call, about a fifth of a message's CPU in a burst."""
    _, base = recorder
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    bot = await _bot(base)
    await bot.send_message(42, "the connection is open")
    loop = asyncio.get_running_loop()
    trips: list[object] = []
    real = loop.run_in_executor

    def counted(executor: Any, fn: Any, *args: Any) -> Any:
        trips.append(fn)
        return real(executor, fn, *args)

    monkeypatch.setattr(loop, "run_in_executor", counted)
    for n in range(20):
        await bot.send_message(42, f"message {n}")
    await bot.shutdown()
    assert trips == []


def test_a_call_is_bounded_and_an_upload_is_given_time_for_its_bytes() -> None:
    message = call_timeout(5.0, 5.0, 10.0)
    assert (message.total, message.sock_connect, message.sock_read) == (20.0, 5.0, 10.0)
    # 20 MB at no less than UPLOAD_RATE: the flat 35 s of a small upload would cut it off.
    big = call_timeout(5.0, 20.0, 10.0, 20_000_000)
    assert big.total is not None
    assert big.total >= 35.0 + 20_000_000 / UPLOAD_RATE
    assert big.total > 300
    assert call_timeout(5.0, 20.0, 10.0, None).total is None  # a handle of unknown size
    assert call_timeout(5.0, None, 10.0).total is None  # PTB's None: no timeout
