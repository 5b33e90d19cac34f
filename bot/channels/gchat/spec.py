"""The Google Chat channel's descriptor. google-auth and its transport load only when the
channel starts or the doctor reads the service account."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiohttp import web
from pydantic import SecretStr

from bot.channels.gchat import NAME
from bot.channels.spec import ChannelSpec
from bot.doctor.report import Finding, in_thread
from bot.pairing import OwnerSetting
from core.channel import Channel
from core.config import Settings

if TYPE_CHECKING:
    from bot.channels.gchat.endpoint import GchatEndpoint
    from bot.kernel import Kernel
    from bot.pairing import OwnerBook


class GchatWiring:
    """The app endpoint's route before the web app starts, the channel after."""

    def __init__(self, settings: Settings) -> None:
        from bot.channels.gchat.setup import gchat_endpoint

        self._endpoint: GchatEndpoint | None = gchat_endpoint(settings)

    @property
    def receives(self) -> bool:
        """Only with the endpoint (GCHAT_AUDIENCE); an incoming webhook is push only."""
        return self._endpoint is not None

    def routes(self) -> list[web.RouteDef]:
        """`POST /gchat/events`, when the endpoint is on."""
        return self._endpoint.routes() if self._endpoint is not None else []

    async def attach(self, app: Kernel, owners: OwnerBook) -> Channel:
        """Start the channel on the assembled app."""
        from bot.channels.gchat.setup import attach_gchat

        return await attach_gchat(app, endpoint=self._endpoint, owners=owners)


def _configured(settings: Settings) -> bool:
    """An endpoint (GCHAT_AUDIENCE; with GCHAT_OWNER_EMAIL, or pairing without it), or push
    only with GCHAT_WEBHOOK_URL."""
    return bool(settings.gchat.audience) or settings.gchat.webhook_url is not None


def _secrets(settings: Settings) -> tuple[SecretStr | None, ...]:
    return (settings.gchat.webhook_url,)


def _owner_ids(settings: Settings) -> tuple[str, ...]:
    email = (settings.gchat.owner_email or "").strip().lower()
    return (email,) if email else ()


async def _doctor(settings: Settings) -> list[Finding]:
    from bot.channels.gchat.doctor import check_gchat

    return await in_thread(lambda: check_gchat(settings))


def _clock_peer(settings: Settings) -> str | None:
    gchat = settings.gchat
    return gchat.api_base_url if gchat.audience or gchat.service_account_file else None


GCHAT = ChannelSpec(
    name=NAME,
    label="Google Chat",
    configured=_configured,
    wiring=GchatWiring,
    secrets=_secrets,
    owner=OwnerSetting("GCHAT_OWNER_EMAIL", _owner_ids),
    doctor=_doctor,
    clock_peer=_clock_peer,
    setup_hint="set GCHAT_AUDIENCE, restart me, and send the app the code I show",
)
