"""Lancelot, through its real composition root, serving Google Chat (and Telegram) fakes."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from pathlib import Path

from bot.app import Lancelot, assemble
from bot.channels.gchat.channel import GchatChannel
from bot.channels.gchat.setup import attach_gchat, gchat_endpoint
from bot.channels.telegram.channel import TelegramChannel
from bot.channels.telegram.setup import attach_telegram, webhook_endpoint
from bot.pairing import OwnerBook
from core.clock import Clock
from core.commands.registry import Router
from core.config import Settings, load_settings
from core.receipts.base import ReceiptQuery
from core.receipts.model import StoredReceipt
from tests.bot.channels.telegram.harness import OWNER as TG_OWNER
from tests.bot.channels.telegram.harness import QUICK, TUNING, free_port
from tests.fakes.gchat import ChatUser, FakeGoogle
from tests.fakes.telegram import FakeTelegram

OWNER_EMAIL = "owner@example.test"
STRANGER_EMAIL = "someone.else@example.test"
PROJECT_NUMBER = "123456789012"
SPACE = "spaces/OWNERDM"


def settings_for(
    google: FakeGoogle,
    home: Path,
    *,
    api: bool = True,
    webhook: bool = False,
    tg: FakeTelegram | None = None,
    **env: str,
) -> Settings:
    """Settings as an operator gives them, with Google's URLs pointed at the fake."""
    environ = {
        "LANCELOT_HOME": str(home),
        "LANCELOT_WEB_PORT": str(free_port()),
        "GCHAT_AUDIENCE": PROJECT_NUMBER,
        "GCHAT_OWNER_EMAIL": OWNER_EMAIL,
        "GCHAT_SPACE": SPACE,
        "LANCELOT_GCHAT_API_BASE_URL": google.api_base_url,
        "LANCELOT_GCHAT_CHAT_CERTS_URL": google.chat_certs_url,
        "LANCELOT_GCHAT_ID_TOKEN_CERTS_URL": google.oauth2_certs_url,
        "LANCELOT_GCHAT_REPLY_WAIT_SECONDS": "3",
        "LANCELOT_GCHAT_CLICK_WAIT_SECONDS": "5",
    }
    if api:
        home.mkdir(parents=True, exist_ok=True)
        key_file = google.write_service_account(home.parent / "chat-sa.json")
        environ["GCHAT_SERVICE_ACCOUNT_FILE"] = str(key_file)
    if webhook:
        environ["GCHAT_WEBHOOK_URL"] = google.webhook_url
    if tg is not None:
        environ.update(
            TELEGRAM_BOT_TOKEN=tg.token,
            TELEGRAM_OWNER_ID=str(TG_OWNER),
            TELEGRAM_API_BASE_URL=tg.base_url,
        )
    environ.update(env)
    return load_settings(environ=environ)


@dataclass
class Running:
    """A started Lancelot with its Google Chat channel (and Telegram, if asked)."""

    app: Lancelot
    channel: GchatChannel
    google: FakeGoogle
    owner: ChatUser
    stranger: ChatUser
    telegram: TelegramChannel | None = None

    @property
    def workspace(self) -> Path:
        return self.app.home / "workspace"

    async def receipts(self, action_type: str) -> list[StoredReceipt]:
        await self.app.ledger.flush()
        page = await self.app.ledger.page(ReceiptQuery(action_type=action_type, limit=200))
        return list(page.receipts)


@contextlib.asynccontextmanager
async def running(
    google: FakeGoogle,
    settings: Settings,
    *,
    tg: FakeTelegram | None = None,
    routers: Iterable[Router] = (),
    clock: Clock | None = None,
) -> AsyncIterator[Running]:
    """assemble() + attach_telegram() + attach_gchat(), as `lancelot run` does (`routers`:
    the test's own commands and button actions; `clock`: a calendar the test moves)."""
    endpoint = gchat_endpoint(settings)
    hook = webhook_endpoint(settings) if tg is not None else None
    routes = [*(endpoint.routes() if endpoint else ()), *(hook.routes() if hook else ())]
    async with assemble(
        settings, routes=routes, delivery=QUICK, routers=routers, clock=clock
    ) as app:
        owners = OwnerBook(app.settings, app.home, channels=list(app.channels))
        telegram = None
        if tg is not None:
            telegram = await attach_telegram(app, webhook=hook, tuning=TUNING, owners=owners)
        channel = await attach_gchat(app, endpoint=endpoint, owners=owners)
        app.health.mark_ready()
        url = f"{app.web_url}/gchat/events"
        audience = settings.gchat.audience or PROJECT_NUMBER
        owner = ChatUser(google, url, audience, email=OWNER_EMAIL, space=SPACE)
        stranger = ChatUser(google, url, audience, email=STRANGER_EMAIL, space="spaces/OTHER")
        yield Running(app, channel, google, owner, stranger, telegram)
