"""The fake Telegram answers the real python-telegram-bot the way Telegram does."""

from __future__ import annotations

import asyncio
import datetime as dtm
import time
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
import telegram
from aiohttp import web
from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Update
from telegram.error import (
    BadRequest,
    Conflict,
    Forbidden,
    InvalidToken,
    NetworkError,
    RetryAfter,
    TimedOut,
)
from telegram.ext import Application, ApplicationBuilder, ContextTypes, MessageHandler, filters
from telegram.request import HTTPXRequest

from tests.fakes.telegram import DEFAULT_USER_ID, FakeTelegram
from tests.fakes.telegram.html_check import format_text
from tests.fakes.telegram_server import FakeTelegram as ShorthandFakeTelegram

OWNER = DEFAULT_USER_ID


@pytest.fixture(autouse=True)
def _ptb_time_periods(monkeypatch: pytest.MonkeyPatch) -> None:
    """Opt in to PTB 22's timedelta periods: with ints, building a RetryAfter warns."""
    monkeypatch.setenv("PTB_TIMEDELTA", "true")


@pytest.fixture
async def tg() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram() as fake:
        yield fake


def local_bot(tg: FakeTelegram, token: str | None = None) -> telegram.Bot:
    """A real Bot aimed at the fake, with PTB's pool sizes.

    The fake speaks plain HTTP on loopback, so httpx need not load its CA bundle, which costs
    about a second per client and PTB makes two per Bot.
    """
    return telegram.Bot(
        token or tg.token,
        base_url=tg.base_url,
        request=HTTPXRequest(httpx_kwargs={"verify": False}),
        get_updates_request=HTTPXRequest(connection_pool_size=1, httpx_kwargs={"verify": False}),
    )


@pytest.fixture
async def bot(tg: FakeTelegram) -> AsyncIterator[telegram.Bot]:
    async with local_bot(tg) as real_bot:
        yield real_bot


def keyboard(*callback_data: str) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup([[InlineKeyboardButton(d, callback_data=d) for d in callback_data]])


# identity and the token


async def test_get_me_answers_with_the_bot_account(bot: telegram.Bot) -> None:
    me = await bot.get_me()

    assert me.is_bot
    assert me.username == "lancelot_test_bot"
    assert me.id == 123456  # the token's numeric prefix, as on Telegram


async def test_a_wrong_token_is_unauthorized(tg: FakeTelegram) -> None:
    with pytest.raises(InvalidToken):
        async with local_bot(tg, token="999:wrong"):
            pass


def test_both_import_paths_name_the_same_fake() -> None:
    assert ShorthandFakeTelegram is FakeTelegram


# the wire, below python-telegram-bot


async def test_errors_and_results_have_telegrams_exact_shape(tg: FakeTelegram) -> None:
    api = f"{tg.base_url}{tg.token}"
    tg.fail_next("sendMessage", status=429, retry_after=7)
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{tg.base_url}999:wrong/getMe") as unauthorized:
            assert unauthorized.status == 401
            assert await unauthorized.json() == {
                "ok": False,
                "error_code": 401,
                "description": "Unauthorized",
            }
        async with http.post(f"{api}/sendMessage", json={"chat_id": OWNER, "text": "x"}) as flood:
            assert flood.status == 429
            assert await flood.json() == {
                "ok": False,
                "error_code": 429,
                "description": "Too Many Requests: retry after 7",
                "parameters": {"retry_after": 7},
            }
        async with http.post(f"{api}/sendMessage", json={"chat_id": OWNER, "text": "x"}) as sent:
            body = await sent.json()
        async with http.get(f"{api}/getChat", params={"chat_id": str(OWNER)}) as unknown:
            assert unknown.status == 404
        async with http.get(f"{api}/sendChatAction?chat_id={OWNER}&action=typing") as action:
            assert (await action.json())["result"] is True

    assert body["ok"] is True
    assert body["result"]["chat"] == {"id": OWNER, "type": "private", "first_name": "User 1001"}
    assert body["result"]["from"]["is_bot"] is True
    assert isinstance(body["result"]["date"], int)
    assert "entities" not in body["result"]  # omitted when empty, as Telegram does


# sendMessage and HTML


async def test_html_message_arrives_formatted(tg: FakeTelegram, bot: telegram.Bot) -> None:
    message = await bot.send_message(OWNER, "<b>Approve</b> &lt;rm -rf&gt; &amp; go", "HTML")

    assert message.text == "Approve <rm -rf> & go"
    assert message.entities[0].type == "bold"
    assert (message.entities[0].offset, message.entities[0].length) == (0, 7)
    assert message.from_user is not None
    assert message.from_user.is_bot
    [sent] = tg.sent
    assert sent["text"] == "<b>Approve</b> &lt;rm -rf&gt; &amp; go"
    assert sent["plain_text"] == "Approve <rm -rf> & go"
    assert sent["parse_mode"] == "HTML"


def test_entity_offsets_count_utf16_units_across_plain_text() -> None:
    formatted = format_text("é 😀 &amp; 中 <b>x</b> & 😀<i>y</i>", "HTML")
    assert formatted.text == "é 😀 & 中 x & 😀y"
    bold, italic = formatted.entities
    assert (bold["offset"], bold["length"]) == (9, 1)  # the emoji is two units
    assert (italic["offset"], italic["length"]) == (15, 1)


async def test_message_ids_grow_per_chat(bot: telegram.Bot) -> None:
    first = await bot.send_message(OWNER, "one")
    second = await bot.send_message(OWNER, "two")
    elsewhere = await bot.send_message(2002, "other chat")

    assert second.message_id == first.message_id + 1
    assert elsewhere.message_id == 1


@pytest.mark.parametrize(
    ("markup", "reason"),
    [
        ("<b>unclosed", 'find end tag corresponding to start tag "b"'),
        ("<b>x</i>", 'Unmatched end tag at byte offset 4, expected "</b>", found "</i>"'),
        ("<div>x</div>", 'Unsupported start tag "div" at byte offset 0'),
        ("1 < 2", 'Unsupported start tag "" at byte offset 2'),
        ("x</b>", "Unexpected end tag at byte offset 1"),
        ("<span>x</span>", 'Tag "span" must have class "tg-spoiler"'),
        ('<a href="x.com', "Unclosed start tag at byte offset 0"),
        ("<a href=x.com", 'Empty attribute name in the tag "a"'),
    ],
)
async def test_broken_html_cannot_be_parsed(bot: telegram.Bot, markup: str, reason: str) -> None:
    with pytest.raises(BadRequest, match=r"^Can't parse entities: ") as caught:
        await bot.send_message(OWNER, markup, parse_mode="HTML")

    # PTB runs str.capitalize() on Telegram's description, lower-casing the rest of it
    assert reason.lower() in caught.value.message.lower()


async def test_every_supported_tag_parses(bot: telegram.Bot) -> None:
    markup = (
        "<b>b</b><strong>s</strong><i>i</i><em>e</em><u>u</u><ins>n</ins><s>s</s><strike>k</strike>"
        '<del>d</del><span class="tg-spoiler">p</span><tg-spoiler>t</tg-spoiler>'
        '<a href="https://example.com/?a=1&amp;b=2">a</a><code>c</code>'
        '<pre><code class="language-python">x = 1</code></pre><blockquote>q</blockquote>'
        "<blockquote expandable>x</blockquote>"
        '<tg-emoji emoji-id="5368324170671202286">👍</tg-emoji>'
    )
    message = await bot.send_message(OWNER, markup, parse_mode="HTML")

    kinds = {entity.type for entity in message.entities}
    assert {"bold", "italic", "underline", "strikethrough", "spoiler", "text_link"} <= kinds
    assert {"code", "pre", "blockquote", "expandable_blockquote", "custom_emoji"} <= kinds
    link = next(e for e in message.entities if e.type == "text_link")
    assert link.url == "https://example.com/?a=1&b=2"
    pre = next(e for e in message.entities if e.type == "pre")
    assert pre.language == "python"


async def test_unknown_named_entities_stay_literal_as_on_telegram(bot: telegram.Bot) -> None:
    message = await bot.send_message(OWNER, "R&D &foo; &#128512; &#x41;", parse_mode="HTML")

    assert message.text == "R&D &foo; 😀 A"


async def test_length_is_measured_after_markup(bot: telegram.Bot) -> None:
    visible = "a" * 4094 + "&<"
    markup = "<b>" + "a" * 4094 + "</b>&amp;&lt;"
    message = await bot.send_message(OWNER, markup, parse_mode="HTML")
    assert message.text == visible

    with pytest.raises(BadRequest, match=r"^Message is too long$"):
        await bot.send_message(OWNER, "a" * 4097)


async def test_empty_text_is_refused(bot: telegram.Bot) -> None:
    with pytest.raises(BadRequest, match=r"^Message text is empty$"):
        await bot.send_message(OWNER, "<b> </b>", parse_mode="HTML")


# inline keyboards


async def test_callback_data_is_limited_to_64_bytes(tg: FakeTelegram, bot: telegram.Bot) -> None:
    fits = "é" * 32  # 64 bytes, 32 characters
    await bot.send_message(OWNER, "ok", reply_markup=keyboard(fits))

    with pytest.raises(BadRequest, match=r"^Button_data_invalid$"):
        await bot.send_message(OWNER, "too long", reply_markup=keyboard("x" * 65))
    assert len(tg.sent) == 1


async def test_url_buttons_are_echoed(bot: telegram.Bot) -> None:
    markup = InlineKeyboardMarkup([[InlineKeyboardButton("Open", url="https://example.com/a")]])

    message = await bot.send_message(OWNER, "see", reply_markup=markup)

    assert message.reply_markup == markup


# editing


async def test_editing_shows_on_the_phone(tg: FakeTelegram, bot: telegram.Bot) -> None:
    card = await bot.send_message(OWNER, "Run <code>ls</code>?", "HTML", reply_markup=keyboard("y"))

    edited = await bot.edit_message_text("Approved at 10:31", OWNER, card.message_id)

    assert isinstance(edited, telegram.Message)
    assert edited.edit_date is not None
    assert edited.reply_markup is None  # editMessageText without reply_markup drops the keyboard
    [shown] = tg.messages_in(OWNER)
    assert (shown["plain_text"], shown["reply_markup"], shown["edits"]) == (
        "Approved at 10:31",
        None,
        1,
    )


async def test_an_identical_edit_is_not_modified(bot: telegram.Bot) -> None:
    card = await bot.send_message(OWNER, "<b>Run</b> it?", "HTML", reply_markup=keyboard("y"))

    with pytest.raises(BadRequest, match=r"^Message is not modified: specified new message"):
        # different markup, same result: Telegram compares what the phone would show
        await bot.edit_message_text(
            "<strong>Run</strong> it?", OWNER, card.message_id, parse_mode="HTML",
            reply_markup=keyboard("y"),
        )  # fmt: skip
    with pytest.raises(BadRequest, match=r"^Message is not modified"):
        await bot.edit_message_reply_markup(OWNER, card.message_id, reply_markup=keyboard("y"))


async def test_edits_need_a_message_the_bot_sent(tg: FakeTelegram, bot: telegram.Bot) -> None:
    users_message = tg.user_message("hi")["message"]["message_id"]

    with pytest.raises(BadRequest, match=r"^Message to edit not found$"):
        await bot.edit_message_text("x", OWNER, 999)
    with pytest.raises(BadRequest, match=r"^Message can't be edited$"):
        await bot.edit_message_text("x", OWNER, users_message)


async def test_removing_the_keyboard(tg: FakeTelegram, bot: telegram.Bot) -> None:
    card = await bot.send_message(OWNER, "Approve?", reply_markup=keyboard("yes", "no"))

    await bot.edit_message_reply_markup(OWNER, card.message_id, reply_markup=None)

    assert tg.sent[0]["reply_markup"] is None
    assert tg.sent[0]["plain_text"] == "Approve?"


async def test_a_deleted_message_leaves_the_chat(tg: FakeTelegram, bot: telegram.Bot) -> None:
    first = await bot.send_message(OWNER, "one")
    await bot.send_message(OWNER, "two")

    assert await bot.delete_message(OWNER, first.message_id)
    with pytest.raises(BadRequest, match=r"^Message to delete not found$"):
        await bot.delete_message(OWNER, first.message_id)

    assert [m["plain_text"] for m in tg.messages_in(OWNER)] == ["two"]
    assert tg.sent[0]["deleted"]


# callbacks


async def test_a_button_press_reaches_the_bot(tg: FakeTelegram, bot: telegram.Bot) -> None:
    card = await bot.send_message(OWNER, "Approve?", reply_markup=keyboard("yes", "no"))

    query_id = tg.press_button(card.message_id, "yes")
    [update] = await bot.get_updates()

    assert update.callback_query is not None
    assert update.callback_query.id == query_id
    assert update.callback_query.data == "yes"
    assert update.callback_query.from_user.id == OWNER
    assert update.callback_query.message is not None
    assert update.callback_query.message.message_id == card.message_id


async def test_only_buttons_on_the_message_can_be_pressed(
    tg: FakeTelegram, bot: telegram.Bot
) -> None:
    card = await bot.send_message(OWNER, "Approve?", reply_markup=keyboard("yes"))

    with pytest.raises(LookupError, match="no button"):
        tg.press_button(card.message_id, "forged")
    with pytest.raises(LookupError, match="no message"):
        tg.press_button(card.message_id + 100, "yes")


async def test_a_callback_query_is_answered_once(tg: FakeTelegram, bot: telegram.Bot) -> None:
    card = await bot.send_message(OWNER, "Approve?", reply_markup=keyboard("yes"))
    query_id = tg.press_button(card.message_id, "yes")

    assert await bot.answer_callback_query(query_id, text="Approved", show_alert=True)
    with pytest.raises(BadRequest, match=r"^Query is too old and response timeout expired"):
        await bot.answer_callback_query(query_id)

    [answer] = tg.answered_callbacks
    assert (answer["text"], answer["show_alert"]) == ("Approved", True)


# faults


async def test_flood_control_says_when_to_retry(tg: FakeTelegram, bot: telegram.Bot) -> None:
    tg.fail_next("sendMessage", status=429, retry_after=3)

    with pytest.raises(RetryAfter) as caught:
        await bot.send_message(OWNER, "hello")
    await bot.send_message(OWNER, "hello")

    assert caught.value.retry_after == dtm.timedelta(seconds=3)
    assert [c.status for c in tg.calls if c.method == "sendMessage"] == [429, 200]
    assert len(tg.sent) == 1


async def test_bad_gateway_is_a_network_error(tg: FakeTelegram, bot: telegram.Bot) -> None:
    tg.fail_next("sendMessage", status=502, times=2)

    for _ in range(2):
        with pytest.raises(NetworkError, match="Bad Gateway"):
            await bot.send_message(OWNER, "hello")
    await bot.send_message(OWNER, "hello")

    assert len(tg.sent) == 1


async def test_a_blocked_user_is_forbidden(tg: FakeTelegram, bot: telegram.Bot) -> None:
    tg.fail_next("sendMessage", status=403, description="Forbidden: bot was blocked by the user")

    with pytest.raises(Forbidden, match="bot was blocked by the user"):
        await bot.send_message(OWNER, "hello")


async def test_a_migrated_group_names_its_new_id(tg: FakeTelegram, bot: telegram.Bot) -> None:
    tg.fail_next("sendMessage", status=400, migrate_to_chat_id=-1001234)

    with pytest.raises(telegram.error.ChatMigrated) as caught:
        await bot.send_message(-42, "hello")

    assert caught.value.new_chat_id == -1001234


async def test_an_outage_fails_every_call_until_it_ends(
    tg: FakeTelegram, bot: telegram.Bot
) -> None:
    tg.go_down()
    with pytest.raises(NetworkError):
        await bot.send_message(OWNER, "hello")
    with pytest.raises(NetworkError):
        await bot.get_updates()

    tg.come_back()
    await bot.send_message(OWNER, "hello")
    assert len(tg.sent) == 1


async def test_an_outage_ends_a_waiting_long_poll(tg: FakeTelegram, bot: telegram.Bot) -> None:
    poll = asyncio.create_task(bot.get_updates(timeout=10))
    await tg.wait_for(lambda: tg.is_polling)

    tg.go_down()

    with pytest.raises(NetworkError):
        await poll


async def test_a_slow_answer_times_out_after_the_message_went_out(
    tg: FakeTelegram, bot: telegram.Bot
) -> None:
    tg.set_delay("sendMessage", 2)

    with pytest.raises(TimedOut):
        await bot.send_message(OWNER, "hello", read_timeout=0.2)

    assert [m["plain_text"] for m in tg.sent] == ["hello"]  # the bot cannot know it was sent


# getUpdates


async def test_offset_confirms_updates_for_good(tg: FakeTelegram, bot: telegram.Bot) -> None:
    tg.user_message("one")
    tg.user_message("two")

    first = await bot.get_updates()
    assert [u.message.text for u in first if u.message] == ["one", "two"]
    again = await bot.get_updates()  # not confirmed yet: delivered again
    assert [u.update_id for u in again] == [u.update_id for u in first]

    assert await bot.get_updates(offset=first[-1].update_id + 1) == ()
    assert await bot.get_updates(offset=first[0].update_id) == ()  # gone, even going back
    assert tg.pending_updates == []


async def test_limit_and_negative_offset(tg: FakeTelegram, bot: telegram.Bot) -> None:
    for text in ("a", "b", "c"):
        tg.user_message(text)

    assert [u.message.text for u in await bot.get_updates(limit=2) if u.message] == ["a", "b"]
    latest = await bot.get_updates(offset=-1)
    assert [u.message.text for u in latest if u.message] == ["c"]
    assert len(tg.pending_updates) == 1


async def test_a_command_carries_its_entity(tg: FakeTelegram, bot: telegram.Bot) -> None:
    tg.user_message("/status now", first_name="Ann", username="ann")

    [update] = await bot.get_updates()

    assert update.message is not None
    assert update.message.parse_entities(["bot_command"]) == {update.message.entities[0]: "/status"}
    assert update.message.chat.type == "private"
    assert update.message.chat.id == OWNER
    assert update.message.from_user is not None
    assert update.message.from_user.username == "ann"


async def test_long_poll_returns_as_soon_as_a_message_arrives(
    tg: FakeTelegram, bot: telegram.Bot
) -> None:
    poll = asyncio.create_task(bot.get_updates(timeout=30))
    await tg.wait_for(lambda: tg.is_polling)
    started = time.monotonic()

    tg.user_message("hello")
    updates = await asyncio.wait_for(poll, timeout=5)

    assert [u.message.text for u in updates if u.message] == ["hello"]
    assert time.monotonic() - started < 5


async def test_long_poll_gives_up_after_its_timeout(bot: telegram.Bot) -> None:
    started = time.monotonic()

    assert await bot.get_updates(timeout=1) == ()

    assert 0.9 <= time.monotonic() - started < 5


async def test_a_second_bot_instance_terminates_the_first_poll(
    tg: FakeTelegram, bot: telegram.Bot
) -> None:
    first = asyncio.create_task(bot.get_updates(timeout=30))
    await tg.wait_for(lambda: tg.is_polling)

    # one Bot polls over a single connection, so the rival is a second instance, as in production
    async with local_bot(tg) as rival:
        assert await rival.get_updates(timeout=0) == ()

    with pytest.raises(Conflict, match="terminated by other getUpdates request"):
        await first


async def test_allowed_updates_filters_what_is_stored(tg: FakeTelegram, bot: telegram.Bot) -> None:
    card = await bot.send_message(OWNER, "Approve?", reply_markup=keyboard("yes"))
    await bot.get_updates(allowed_updates=["callback_query"])

    dropped = tg.user_message("ignored")
    tg.press_button(card.message_id, "yes")

    assert "update_id" not in dropped
    [update] = await bot.get_updates()
    assert update.callback_query is not None


# webhook


async def test_polling_conflicts_with_a_webhook(tg: FakeTelegram, bot: telegram.Bot) -> None:
    assert await bot.set_webhook("https://bot.example.com/hook", secret_token="s3cret")

    with pytest.raises(Conflict, match="can't use getUpdates method while webhook is active"):
        await bot.get_updates()

    info = await bot.get_webhook_info()
    assert info.url == "https://bot.example.com/hook"
    assert not info.has_custom_certificate
    assert await bot.delete_webhook()
    assert await bot.get_updates() == ()


async def test_webhook_urls_are_checked(bot: telegram.Bot) -> None:
    with pytest.raises(BadRequest, match=r"(?i)an HTTPS URL must be provided"):
        await bot.set_webhook("http://bot.example.com/hook")
    with pytest.raises(BadRequest, match=r"^Secret token contains unallowed characters$"):
        await bot.set_webhook("https://bot.example.com/hook", secret_token="no spaces")


async def test_updates_are_pushed_to_the_webhook_with_the_secret(
    tg: FakeTelegram, bot: telegram.Bot
) -> None:
    received: list[tuple[str | None, dict[str, Any]]] = []

    async def hook(request: web.Request) -> web.Response:
        received.append(
            (request.headers.get("X-Telegram-Bot-Api-Secret-Token"), await request.json())
        )
        return web.Response(status=200 if len(received) == 1 else 500)

    app = web.Application()
    app.router.add_post("/hook", hook)
    runner = web.AppRunner(app)
    await runner.setup()
    try:
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        url = f"http://127.0.0.1:{runner.addresses[0][1]}/hook"
        await bot.set_webhook(url, secret_token="s3cret", drop_pending_updates=True)
        tg.user_message("one")
        tg.user_message("two")

        assert await tg.deliver_webhook() == [200, 500]
        info = await bot.get_webhook_info()
        assert await tg.post_webhook({"update_id": 1}, secret="forged") == 500
    finally:
        await runner.cleanup()

    assert [(secret, body["message"]["text"]) for secret, body in received[:2]] == [
        ("s3cret", "one"),
        ("s3cret", "two"),
    ]
    assert received[2][0] == "forged"
    assert info.pending_update_count == 1  # the failed delivery stays pending
    assert info.last_error_message == "Wrong response from the webhook: 500 Internal Server Error"


# commands, chat actions, documents


async def test_commands_round_trip(tg: FakeTelegram, bot: telegram.Bot) -> None:
    assert await bot.set_my_commands([("status", "What is running"), ("stop", "Stop a job")])

    commands = await bot.get_my_commands()

    assert [(c.command, c.description) for c in commands] == [
        ("status", "What is running"),
        ("stop", "Stop a job"),
    ]
    assert tg.commands[0] == {"command": "status", "description": "What is running"}
    with pytest.raises(BadRequest, match="Bot_command_invalid"):
        await bot.set_my_commands([("Bad-Name", "x")])


async def test_chat_actions_are_recorded(tg: FakeTelegram, bot: telegram.Bot) -> None:
    assert await bot.send_chat_action(OWNER, "typing")

    with pytest.raises(BadRequest, match=r"^Wrong parameter action in request$"):
        await bot.send_chat_action(OWNER, "dancing")
    assert [(a.chat_id, a.action) for a in tg.chat_actions] == [(OWNER, "typing")]


async def test_documents_upload_as_multipart(tg: FakeTelegram, bot: telegram.Bot) -> None:
    message = await bot.send_document(
        OWNER, b"receipt body", filename="receipt.txt", caption="<i>receipt</i>", parse_mode="HTML"
    )
    assert message.document is not None
    again = await bot.send_document(OWNER, message.document.file_id)

    assert message.caption == "receipt"
    assert message.document.file_name == "receipt.txt"
    assert message.document.file_size == len(b"receipt body")
    assert again.document is not None
    assert again.document.file_id == message.document.file_id
    document = tg.sent[0]["document"]
    assert document is not None
    assert document["content"] == b"receipt body"
    with pytest.raises(BadRequest, match=r"(?i)wrong file identifier"):
        await bot.send_document(OWNER, "not-a-file-id")


# waiting


async def test_waiting_for_a_message_that_never_comes_times_out(tg: FakeTelegram) -> None:
    with pytest.raises(TimeoutError, match="sent 0 message"):
        await tg.wait_for_sent(1, timeout=0.1)


async def test_a_real_application_polls_and_replies(tg: FakeTelegram) -> None:
    async def echo(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.effective_message is not None
        assert update.effective_chat is not None
        await update.effective_chat.send_message(f"echo: {update.effective_message.text}")

    app: Application[Any, Any, Any, Any, Any, Any] = (
        ApplicationBuilder().token(tg.token).base_url(tg.base_url).build()
    )
    app.add_handler(MessageHandler(filters.TEXT, echo))
    async with app:
        await app.start()
        assert app.updater is not None
        await app.updater.start_polling()
        tg.user_message("hello")
        [reply] = await tg.wait_for_sent(1)
        await app.updater.stop()
        await app.stop()

    assert (reply["chat_id"], reply["plain_text"]) == (OWNER, "echo: hello")
    assert tg.pending_updates == []  # PTB confirmed the update on its way out
