"""Bot API calls that show cards, with Telegram's errors translated into Lancelot's.

A 429 becomes RateLimited (with Telegram's retry_after), a refusal that will not change
(blocked, bad request) DeliveryRejected, and network trouble or a 5xx DeliveryFailed, so the
outbox knows what to retry. "Can't parse entities" is answered by resending as plain text,
and "message is not modified" counts as success.
"""

from __future__ import annotations

import datetime as dtm
import logging
from collections.abc import Iterator
from contextlib import contextmanager

from telegram import Bot, InlineKeyboardMarkup, LinkPreviewOptions
from telegram.constants import ParseMode
from telegram.error import (
    BadRequest,
    ChatMigrated,
    Forbidden,
    InvalidToken,
    RetryAfter,
    TelegramError,
    TimedOut,
)

from bot.channels.telegram.application import LancelotBot
from bot.channels.telegram.render import Chunk, without_links
from core.errors import DeliveryFailed, DeliveryRejected, RateLimited

log = logging.getLogger(__name__)

PARSE_ERROR = "can't parse entities"
NOT_MODIFIED = "message is not modified"
# Link previews stay off: Telegram's servers would open one-time links (the receipt page's).
NO_PREVIEW = LinkPreviewOptions(is_disabled=True)


def seconds(period: int | float | dtm.timedelta) -> float:
    """A PTB time period (int seconds or timedelta) as float seconds."""
    if isinstance(period, dtm.timedelta):
        return period.total_seconds()
    return float(period)


@contextmanager
def translated(what: str) -> Iterator[None]:
    """Re-raise PTB errors from the block as core errors (no tracebacks, no token)."""
    try:
        yield
    except RetryAfter as exc:
        raise RateLimited(seconds(exc.retry_after), f"{what}: {exc.message}") from None
    except (BadRequest, Forbidden, InvalidToken, ChatMigrated) as exc:
        raise DeliveryRejected(f"{what}: {exc.message}") from None
    except TimedOut:
        raise DeliveryFailed(f"{what}: timed out") from None
    except TelegramError as exc:
        raise DeliveryFailed(f"{what}: {exc.message}") from None


def chat_number(chat_id: str) -> int:
    """Telegram chat ids are integers."""
    try:
        return int(chat_id)
    except ValueError:
        raise DeliveryRejected(f"not a Telegram chat id: {chat_id!r}") from None


async def send_chunk(
    bot: LancelotBot, chat_id: str, chunk: Chunk, markup: InlineKeyboardMarkup | None
) -> int:
    """sendMessage as HTML; plain text if Telegram cannot parse it; without link buttons if
    Telegram refuses their URLs. The new message's id."""
    chat = chat_number(chat_id)
    with translated("sendMessage"):
        try:
            return await _send(bot, chat, chunk.html, ParseMode.HTML, markup)
        except BadRequest as exc:
            problem = exc.message.lower()
            if PARSE_ERROR in problem:
                log.warning("telegram could not parse a card's HTML; sending it as plain text")
                return await _send(bot, chat, chunk.plain, None, markup)
            if _refused_link(problem) and markup is not None:
                log.warning("telegram refused a link button (%s); sending without it", problem)
                return await _send(bot, chat, chunk.html, ParseMode.HTML, without_links(markup))
            raise


async def edit_chunk(
    bot: Bot, chat_id: str, message_id: str, chunk: Chunk, markup: InlineKeyboardMarkup | None
) -> None:
    """editMessageText (and keyboard: none when `markup` is None); unchanged is fine."""
    chat, message = chat_number(chat_id), chat_number(message_id)
    with translated("editMessageText"):
        try:
            await _edit(bot, chat, message, chunk.html, ParseMode.HTML, markup)
        except BadRequest as exc:
            problem = exc.message.lower()
            if NOT_MODIFIED in problem:
                return
            if PARSE_ERROR in problem:
                await _edit_plain(bot, chat, message, chunk.plain, markup)
                return
            if _refused_link(problem) and markup is not None:
                await _edit(bot, chat, message, chunk.html, ParseMode.HTML, without_links(markup))
                return
            raise


async def _send(
    bot: LancelotBot, chat: int, text: str, mode: str | None, markup: InlineKeyboardMarkup | None
) -> int:
    return await bot.send_message_id(
        chat, text, parse_mode=mode, reply_markup=markup, link_preview_options=NO_PREVIEW
    )


async def _edit(
    bot: Bot,
    chat: int,
    message: int,
    text: str,
    mode: str | None,
    markup: InlineKeyboardMarkup | None,
) -> None:
    await bot.edit_message_text(
        text,
        chat_id=chat,
        message_id=message,
        parse_mode=mode,
        reply_markup=markup,
        link_preview_options=NO_PREVIEW,
    )


async def _edit_plain(
    bot: Bot, chat: int, message: int, text: str, markup: InlineKeyboardMarkup | None
) -> None:
    try:
        await _edit(bot, chat, message, text, None, markup)
    except BadRequest as exc:
        if NOT_MODIFIED not in exc.message.lower():
            raise


def _refused_link(problem: str) -> bool:
    return "button_url_invalid" in problem or ("button" in problem and "url" in problem)
