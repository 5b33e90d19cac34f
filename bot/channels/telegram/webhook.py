"""Webhook mode: the POST route Telegram delivers updates to, on Lancelot's own web app.

Telegram sends the secret given to setWebhook in X-Telegram-Bot-Api-Secret-Token; a request
without it, or with another, gets 403 and a (bounded) receipt, and a body that is not an
update gets 400 and a receipt. An update is answered 200 only once it is kept in the inbox;
one that could not be kept gets 500, and Telegram sends it again. Nothing here answers with
a traceback.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

from aiohttp import web
from telegram import Bot, Update

from bot.channels.telegram.arrivals import Received
from core.config.settings import TelegramSettings
from core.errors import LancelotError
from core.security.refusals import RefusalLog

log = logging.getLogger(__name__)

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"  # noqa: S105 (a header name)

Sink = Callable[[Received], Awaitable[None]]


def webhook_secret(settings: TelegramSettings, server_secret: bytes) -> str:
    """TELEGRAM_WEBHOOK_SECRET, or one derived from LANCELOT_SECRET (stable across restarts;
    64 characters of [0-9a-f], which Telegram accepts)."""
    if settings.webhook_secret is not None:
        return settings.webhook_secret.get_secret_value()
    return hmac.new(server_secret, b"lancelot-telegram-webhook", hashlib.sha256).hexdigest()


def webhook_path(url: str) -> str:
    """The path part of TELEGRAM_WEBHOOK_URL: where the route lives."""
    return urlsplit(url).path or "/"


@dataclass(frozen=True, slots=True)
class _Binding:
    bot: Bot
    sink: Sink
    secret: bytes
    refusals: RefusalLog


class WebhookEndpoint:
    """Made before the web app starts (its route must exist then); bound to the running
    channel later. Until bound it answers 503, which Telegram retries."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._binding: _Binding | None = None

    def routes(self) -> list[web.RouteDef]:
        """The route to add to the web app."""
        return [web.post(self.path, self.handle)]

    def bind(self, bot: Bot, sink: Sink, secret: str, refusals: RefusalLog) -> None:
        """Start accepting updates for `bot` into `sink`."""
        self._binding = _Binding(bot, sink, secret.encode(), refusals)

    def unbind(self) -> None:
        """Stop accepting updates (503 again)."""
        self._binding = None

    async def handle(self, request: web.Request) -> web.Response:
        """POST from Telegram: check the secret, parse the update, queue it."""
        binding = self._binding
        if binding is None:
            return web.Response(status=503, text="not ready")
        provided = request.headers.get(SECRET_HEADER)
        if provided is None or not hmac.compare_digest(provided.encode(), binding.secret):
            secret = "missing" if provided is None else "wrong"
            source = f"webhook:{request.remote}:{secret}"
            binding.refusals.record("webhook", "forbidden", source, {"secret": secret})
            return web.Response(status=403, text="forbidden")
        body = await request.read()
        received = _parse(body, binding.bot)
        if received is None:
            source = f"webhook:{request.remote}:malformed"
            binding.refusals.record("webhook", "malformed", source, {"bytes": len(body)})
            return web.Response(status=400, text="not an update")
        try:
            await binding.sink(received)
        except LancelotError as exc:
            log.warning("webhook: an update could not be kept (%s); Telegram will retry", exc)
            return web.Response(status=500, text="not kept")
        return web.Response(text="ok")


def _parse(body: bytes, bot: Bot) -> Received | None:
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("update_id"), int):
        return None
    try:
        update = Update.de_json(data, bot)
    except Exception:  # PTB raises whatever the garbage provokes
        log.info("webhook: a body with an update_id could not be read as an update")
        return None
    return Received(update, data)
