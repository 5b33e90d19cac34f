"""Wiring the Google Chat channel into a running Lancelot (the composition root calls these)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiohttp import web

from bot.channels.gchat.channel import GchatChannel, action_url_for
from bot.channels.gchat.endpoint import PATH, GchatEndpoint
from bot.channels.gchat.events import NAME
from bot.pairing import OwnerBook
from core.config import Settings
from core.errors import ConfigError
from core.security.refusals import RefusalLog

if TYPE_CHECKING:
    from bot.kernel import Kernel


def gchat_wanted(settings: Settings) -> bool:
    """The channel runs with an endpoint (GCHAT_AUDIENCE; with GCHAT_OWNER_EMAIL, or pairing
    without it), or push-only with GCHAT_WEBHOOK_URL."""
    return bool(settings.gchat.audience) or settings.gchat.webhook_url is not None


def gchat_endpoint(settings: Settings) -> GchatEndpoint | None:
    """The route to give `assemble(routes=...)` when the endpoint is enabled (the web app's
    routes are fixed once it starts, so this comes before the channel)."""
    return GchatEndpoint(PATH) if settings.gchat.audience else None


async def attach_gchat(
    app: Kernel, *, endpoint: GchatEndpoint | None = None, owners: OwnerBook | None = None
) -> GchatChannel:
    """Start the Google Chat channel on `app`, with durable delivery through the outbox. With
    an endpoint but no owner in the settings or paired before (`owners`), it starts pairing.

    Raises ConfigError when the endpoint is enabled but not served, or the service account
    file cannot be used.
    """
    settings = app.settings
    book = owners or OwnerBook(settings, app.home)
    app.status_fields.setdefault("Owner", book.describe)
    owner = book.gchat_email()
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


class GchatWiring:
    """The runner's one handle on Google Chat: the route before the web app starts, the
    channel after."""

    def __init__(self, settings: Settings) -> None:
        self.endpoint = gchat_endpoint(settings)

    def routes(self) -> list[web.RouteDef]:
        """Routes for `assemble(routes=...)`."""
        return self.endpoint.routes() if self.endpoint is not None else []

    async def attach(self, app: Kernel, owners: OwnerBook | None = None) -> GchatChannel:
        """Start the channel on the assembled app."""
        return await attach_gchat(app, endpoint=self.endpoint, owners=owners)
