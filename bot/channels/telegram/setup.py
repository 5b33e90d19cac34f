"""Wiring the Telegram channel into a running Lancelot (the composition root calls these)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from bot.channels.telegram import NAME
from bot.channels.telegram.application import TelegramTuning
from bot.channels.telegram.channel import TelegramChannel, WebhookMode
from bot.channels.telegram.webhook import WebhookEndpoint, webhook_path, webhook_secret
from bot.home import load_secret
from bot.pairing import OwnerBook
from core.config import Settings
from core.errors import ConfigError, LancelotError
from core.events import Card, CardKind
from core.security.refusals import RefusalLog

if TYPE_CHECKING:
    from bot.kernel import Kernel

log = logging.getLogger(__name__)


def webhook_endpoint(settings: Settings) -> WebhookEndpoint | None:
    """The webhook route to give `assemble(routes=...)`, when Telegram runs in webhook mode
    (the web app's routes are fixed once it starts, so this comes before the channel)."""
    url = settings.telegram.webhook_url
    if settings.telegram.bot_token is None or not url:
        return None
    return WebhookEndpoint(webhook_path(url))


async def attach_telegram(
    app: Kernel,
    *,
    webhook: WebhookEndpoint | None = None,
    tuning: TelegramTuning | None = None,
    owners: OwnerBook,
) -> TelegramChannel:
    """Start the Telegram channel on `app`: durable delivery, health check, webhook or polling.
    With no owner in the settings or paired before (`owners`), it starts pairing.

    Raises ConfigError when the token is rejected or webhook mode cannot work here.
    """
    settings = app.settings.telegram
    book = owners
    app.status_fields.setdefault("Owner", book.describe)
    known = tuple(int(owner) for owner in book.owner_ids(NAME))
    pairing = None if known else book.open(NAME, ledger=app.ledger, tasks=app.tasks)
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
        inbox=app.inbox,
        commands=[(c.name, c.summary) for c in app.commands.listing()],
        webhook=mode,
        tuning=tuning,
        tasks=app.tasks,
        on_recovered=lambda: app.outbox.retry_now(NAME),  # the backlog goes at once
        owners=known,
        pairing=pairing,
    )
    await app.attach(channel, durable=True)  # the outbox resumes before anything is handled
    abandoned = await channel.listen()
    if pairing is not None:
        pairing.start()  # the token worked: now the code is worth printing
    app.health.register("telegram", channel.health)
    if abandoned:
        await _tell_set_aside(app, channel, len(abandoned))
    return channel


async def _tell_set_aside(app: Kernel, channel: TelegramChannel, count: int) -> None:
    """The owner hears of updates the inbox gave up on (each has its receipt)."""
    notice = Card(
        kind=CardKind.NOTICE,
        title="Messages set aside",
        body=(
            f"{count} message(s) you sent stopped Lancelot each time they were handled, so "
            "I set them aside instead of trying again. Their update_abandoned receipts say "
            "which; please send again what still matters."
        ),
    )
    for chat_id in channel.owner_chat_ids:
        try:
            await app.bus.send(channel.name, chat_id, notice)
        except LancelotError as exc:
            log.warning("telegram: could not tell the owner of set-aside updates: %s", exc)
