"""The Telegram channel's descriptor. Nothing here imports python-telegram-bot: it loads when
the channel starts."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from aiohttp import web
from pydantic import SecretStr

from bot.channels.spec import ChannelSpec
from bot.channels.telegram import NAME
from bot.doctor.report import Finding
from bot.pairing import OwnerSetting
from core.channel import Channel
from core.config import Settings

if TYPE_CHECKING:
    from bot.channels.telegram.webhook import WebhookEndpoint
    from bot.kernel import Kernel
    from bot.pairing import OwnerBook


class TelegramWiring:
    """The webhook route (webhook mode) before the web app starts, the channel after."""

    receives = True

    def __init__(self, settings: Settings) -> None:
        from bot.channels.telegram.setup import webhook_endpoint

        self._hook: WebhookEndpoint | None = webhook_endpoint(settings)

    def routes(self) -> list[web.RouteDef]:
        """The webhook's route, when Telegram posts updates here."""
        return self._hook.routes() if self._hook is not None else []

    async def attach(self, app: Kernel, owners: OwnerBook) -> Channel:
        """Start polling or the webhook on the assembled app."""
        from bot.channels.telegram.setup import attach_telegram

        return await attach_telegram(app, webhook=self._hook, owners=owners)


def _configured(settings: Settings) -> bool:
    """A token is enough: with no owner in the settings or paired before, it pairs."""
    return settings.telegram.bot_token is not None


def _secrets(settings: Settings) -> tuple[SecretStr | None, ...]:
    return settings.telegram.bot_token, settings.telegram.webhook_secret


def _owner_ids(settings: Settings) -> tuple[str, ...]:
    return _as_text(settings.telegram.owner_ids)


@functools.lru_cache(maxsize=4)
def _as_text(ids: tuple[int, ...]) -> tuple[str, ...]:
    """The ids as text, worked out once per list: /status asks on every call, and a list of
    thousands (many chats of one owner's) cost a fifth of a millisecond each time."""
    return tuple(str(owner) for owner in ids)


async def _doctor(settings: Settings) -> list[Finding]:
    from bot.channels.telegram.doctor import check_telegram

    return await check_telegram(settings)


def _clock_peer(settings: Settings) -> str | None:
    return settings.telegram.api_base_url if _configured(settings) else None


TELEGRAM = ChannelSpec(
    name=NAME,
    label="Telegram",
    configured=_configured,
    wiring=TelegramWiring,
    secrets=_secrets,
    owner=OwnerSetting("TELEGRAM_OWNER_ID", _owner_ids),
    doctor=_doctor,
    clock_peer=_clock_peer,
    setup_hint="set TELEGRAM_BOT_TOKEN, restart me, send the bot the code I show",
)
