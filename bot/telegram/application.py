"""Builds the python-telegram-bot Application, started by hand inside Lancelot's loop."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from telegram.ext import Application, ApplicationBuilder

from bot.telegram.transport import AiohttpRequest
from core.config.settings import TelegramSettings
from core.errors import ConfigError

# The Application's generic parameters do not matter here (no job queue, no persistence).
TelegramApp = Application[Any, Any, Any, Any, Any, Any]


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
    app: TelegramApp = (
        ApplicationBuilder()
        .token(settings.bot_token.get_secret_value())
        .base_url(settings.api_base_url)
        .base_file_url(file_base_url(settings.api_base_url))
        .request(request)
        .get_updates_request(updates_request)
        .updater(None)
        .job_queue(None)
        .build()
    )
    return app, updates_request
