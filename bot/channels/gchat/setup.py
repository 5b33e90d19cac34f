"""Wiring the Google Chat channel into a running Lancelot (the composition root calls these)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.channels.gchat import NAME
from bot.channels.gchat.channel import GchatChannel, action_url_for
from bot.channels.gchat.endpoint import PATH, GchatEndpoint
from bot.pairing import OwnerBook
from core.config import Settings
from core.errors import ConfigError
from core.security.refusals import RefusalLog

if TYPE_CHECKING:
    from bot.kernel import Kernel


def gchat_endpoint(settings: Settings) -> GchatEndpoint | None:
    """The route to give `assemble(routes=...)` when the endpoint is enabled (the web app's
    routes are fixed once it starts, so this comes before the channel)."""
    return GchatEndpoint(PATH) if settings.gchat.audience else None


async def attach_gchat(
    app: Kernel, *, endpoint: GchatEndpoint | None = None, owners: OwnerBook
) -> GchatChannel:
    """Start the Google Chat channel on `app`, with durable delivery through the outbox. With
    an endpoint but no owner in the settings or paired before (`owners`), it starts pairing.

    Raises ConfigError when the endpoint is enabled but not served, or the service account
    file cannot be used.
    """
    settings = app.settings
    book = owners
    app.status_fields.setdefault("Owner", book.describe)
    owner = next(iter(book.owner_ids(NAME)), "")
    pairing = None
    if settings.gchat.audience and not owner:
        pairing = book.open(NAME, ledger=app.ledger, tasks=app.tasks)
    if settings.gchat.audience and (endpoint is None or app.web_port is None):
        raise ConfigError(
            "gchat: GCHAT_AUDIENCE is set, but /gchat/events is not on a running web app "
            "(check LANCELOT_WEB_PORT)"
        )
    channel = GchatChannel(
        app.bus,
        settings.gchat,
        refusals=RefusalLog(app.ledger),
        endpoint=endpoint,
        action_url=action_url_for(settings.gchat, settings.public_url, PATH),
        owner=owner,
        pairing=pairing,
    )
    await app.attach(channel, durable=True)
    if pairing is not None:
        pairing.start()
    # Pushes and certificates; cards stuck in the outbox are the shared "delivery" check.
    # No last-receive watchdog as Telegram has: Chat calls only when the owner writes.
    app.health.register("gchat", channel.health)
    return channel
