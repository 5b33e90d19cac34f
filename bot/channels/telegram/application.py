"""Builds the python-telegram-bot Application, started by hand inside Lancelot's loop."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from telegram import InlineKeyboardMarkup, LinkPreviewOptions
from telegram.ext import Application, ApplicationBuilder, ExtBot

from bot.channels.telegram.transport import AiohttpRequest
from core.config.settings import TelegramSettings
from core.errors import ConfigError, DeliveryRejected

# The Application's generic parameters do not matter here (no job queue, no persistence).
TelegramApp = Application[Any, Any, Any, Any, Any, Any]


class LancelotBot(ExtBot[None]):
    """PTB's bot, with two calls that answer raw JSON instead of PTB objects.

    Through `_post`, PTB's own path for every method (defaults, errors, timeouts), as its
    ExtBot subclass uses it. Parsing a sent Message that only the id is wanted of was an
    eighth of the main thread's CPU in a burst; the poller parses each update by itself so
    one it cannot read is skipped, not the whole batch.
    """

    async def send_message_id(
        self,
        chat_id: int,
        text: str,
        *,
        parse_mode: str | None,
        reply_markup: InlineKeyboardMarkup | None,
        link_preview_options: LinkPreviewOptions,
    ) -> int:
        """sendMessage; the new message's id."""
        call = {
            "chat_id": chat_id,
            "text": text,
            "parse_mode": parse_mode,
            "reply_markup": reply_markup,
            "link_preview_options": link_preview_options,
        }
        result = await self._post("sendMessage", call)
        message_id = result.get("message_id") if isinstance(result, dict) else None
        if not isinstance(message_id, int):  # accepted all the same: sending again would repeat it
            raise DeliveryRejected(f"sendMessage: answered without a message id: {result!r:.200}")
        return message_id

    async def get_updates_raw(
        self,
        offset: int | None,
        poll_seconds: float,
        allowed_updates: Sequence[str],
        *,
        read_timeout: float | None,
    ) -> Any:
        """getUpdates, long polling up to `poll_seconds`; the updates as JSON."""
        call = {"offset": offset, "timeout": poll_seconds, "allowed_updates": list(allowed_updates)}
        return await self._post("getUpdates", call, read_timeout=read_timeout)


@dataclass(frozen=True, slots=True)
class TelegramTuning:
    """Knobs that are not settings: timings worth shortening in tests, and the HTTP pool."""

    poll_timeout: float = 25.0  # long-poll seconds (capped at a third of the watchdog)
    poll_backoff_base: float = 1.0
    poll_backoff_cap: float = 5.0  # after an outage, polling is at most this late to notice
    typing_delay: float = 0.3  # show "typing" only for work slower than this
    press_fallback: float = 10.0  # answer a press plainly if no verdict came by then
    # Sends and edits in flight at once: a few cover Telegram's ~30 messages a second at
    # internet round trips.
    concurrent_calls: int = 4
    connection_pool: int = 8
    read_timeout: float = 10.0
    # Only for tests against a fake server on loopback: skips loading the CA bundle (slow).
    # Production keeps TLS verification; no setting or environment variable reaches this.
    verify_tls: bool = True


def file_base_url(api_base_url: str) -> str:
    """Where files live: https://api.telegram.org/bot -> https://api.telegram.org/file/bot."""
    base = api_base_url.rstrip("/")
    if base.endswith("/bot"):
        return base[: -len("bot")] + "file/bot"
    return base + "/file"


def build_application(
    settings: TelegramSettings, tuning: TelegramTuning
) -> tuple[TelegramApp, AiohttpRequest]:
    """An Application without Updater or JobQueue (Lancelot polls, or takes the webhook),
    and the HTTP client its getUpdates calls use (the watchdog may replace its connections)."""
    if settings.bot_token is None:
        raise ConfigError("telegram: TELEGRAM_BOT_TOKEN is not set")
    request = AiohttpRequest(
        connection_pool_size=tuning.connection_pool,
        read_timeout=tuning.read_timeout,
        verify_tls=tuning.verify_tls,
    )
    updates_request = AiohttpRequest(connection_pool_size=1, verify_tls=tuning.verify_tls)
    bot = LancelotBot(
        settings.bot_token.get_secret_value(),
        base_url=settings.api_base_url,
        base_file_url=file_base_url(settings.api_base_url),
        request=request,
        get_updates_request=updates_request,
    )
    app: TelegramApp = ApplicationBuilder().bot(bot).updater(None).job_queue(None).build()
    return app, updates_request
