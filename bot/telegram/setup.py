"""Wiring the Telegram channel into a running Lancelot (the composition root calls these)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.home import load_secret
from bot.telegram.application import TelegramTuning
from bot.telegram.channel import TelegramChannel, WebhookMode
from bot.telegram.webhook import WebhookEndpoint, webhook_path, webhook_secret
from core.config import Settings
from core.errors import ConfigError
from core.security.refusals import RefusalLog

if TYPE_CHECKING:
    from bot.kernel import Kernel


def webhook_endpoint(settings: Settings) -> WebhookEndpoint | None:
    """The webhook route to give `assemble(routes=...)`, when Telegram runs in webhook mode
    (the web app's routes are fixed once it starts, so this comes before the channel)."""
    url = settings.telegram.webhook_url
    if not settings.telegram_enabled or not url:
        return None
    return WebhookEndpoint(webhook_path(url))


async def attach_telegram(
    app: Kernel,
    *,
    webhook: WebhookEndpoint | None = None,
    tuning: TelegramTuning | None = None,
) -> TelegramChannel:
    """Start the Telegram channel on `app`: durable delivery, health check, webhook or polling.

    Raises ConfigError when the token is rejected or webhook mode cannot work here.
    """
    settings = app.settings.telegram
    mode = None
    if settings.webhook_url:
        if webhook is None or app.web_port is None:
            raise ConfigError(
                "telegram: TELEGRAM_WEBHOOK_URL is set, but its route is not on a running web "
                "app (check LANCELOT_WEB_PORT)"
            )
        secret = webhook_secret(settings, load_secret(app.settings, app.home))
        mode = WebhookMode(settings.webhook_url, webhook, secret)
    channel = TelegramChannel(
        app.bus,
        settings,
        refusals=RefusalLog(app.ledger),
        commands=[(c.name, c.summary) for c in app.commands.listing()],
        webhook=mode,
        tuning=tuning,
        tasks=app.tasks,
    )
    await app.attach(channel, durable=True)
    app.health.register("telegram", channel.health)
    return channel
