"""Lancelot, through its real composition root, talking to the fake Telegram."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.app import Lancelot, assemble
from bot.channels.telegram.application import TelegramTuning
from bot.channels.telegram.channel import TelegramChannel
from bot.channels.telegram.setup import attach_telegram, webhook_endpoint
from bot.pairing import OwnerBook
from core.clock import Clock
from core.commands.registry import Router
from core.config import Settings, load_settings
from core.delivery.outbox import DeliveryPolicy
from core.events import Button, Card, CardKind
from core.llm.types import ModelRouter
from core.receipts.base import ReceiptQuery
from core.receipts.model import StoredReceipt
from tests.fakes.lancelot_process import free_port
from tests.fakes.telegram import DEFAULT_USER_ID, FakeTelegram, SentMessage

OWNER = DEFAULT_USER_ID
STRANGER = 6666

# Delivery as in production but without waiting: no pacing, short backoff.
QUICK = DeliveryPolicy(
    global_rate=0, group_rate=0, backoff_base=0.02, backoff_cap=0.1, first_attempt_wait=5
)
# Short timings; TLS verification off only because the fake speaks plain HTTP on loopback.
TUNING = TelegramTuning(
    poll_timeout=1,
    poll_backoff_base=0.02,
    poll_backoff_cap=0.1,
    typing_delay=0.05,
    press_fallback=5,
    verify_tls=False,
)


def settings_for(tg: FakeTelegram, home: Path, **env: str) -> Settings:
    """Settings as an operator would give them, pointed at the fake Bot API."""
    return load_settings(
        environ={
            "LANCELOT_HOME": str(home),
            "TELEGRAM_BOT_TOKEN": tg.token,
            "TELEGRAM_OWNER_ID": str(OWNER),
            "TELEGRAM_API_BASE_URL": tg.base_url,
            "LANCELOT_WEB_PORT": str(free_port()),
            "LANCELOT_SANDBOX_WARM_AT_START": "false",  # containers only for tests that /run
            "FEATURE_LOCAL_MODEL": "false",  # proven in tests/core/llm
            **env,
        }
    )


@dataclass
class Running:
    """A started Lancelot with its Telegram channel."""

    app: Lancelot
    channel: TelegramChannel
    tg: FakeTelegram

    async def say(self, text: str, *, user_id: int = OWNER) -> SentMessage:
        """The owner types `text`; returns the next message the bot sends back."""
        before = len(self.tg.sent)
        self.tg.user_message(text, user_id=user_id)
        sent = await self.tg.wait_for_sent(before + 1)
        return sent[before]

    async def receipts(self, action_type: str) -> list[StoredReceipt]:
        await self.app.ledger.flush()
        page = await self.app.ledger.page(ReceiptQuery(action_type=action_type, limit=200))
        return list(page.receipts)

    async def card_with_button(self, action: str = "demo") -> tuple[Card, SentMessage]:
        """Send the owner a card with one button whose token the server issued."""
        card_id = Card(kind=CardKind.NOTICE, title="x").correlation_id
        token = await self.app.tokens.issue(action, {"n": 1}, card_id)
        card = Card(
            kind=CardKind.APPROVAL,
            title="Pick one",
            body="Go ahead?",
            buttons=(Button("Go", token),),
            correlation_id=card_id,
        )
        before = len(self.tg.sent)
        await self.app.bus.send("telegram", str(OWNER), card)
        return card, (await self.tg.wait_for_sent(before + 1))[before]


@contextlib.asynccontextmanager
async def running(
    tg: FakeTelegram,
    settings: Settings,
    *,
    policy: DeliveryPolicy = QUICK,
    clock: Clock | None = None,
    tuning: TelegramTuning = TUNING,
    models: ModelRouter | None = None,
    routers: Iterable[Router] = (),
) -> AsyncIterator[Running]:
    """assemble() + attach_telegram(), as `lancelot run` does (`models`: the agent's model;
    `routers`: the test's own commands and button actions)."""
    hook = webhook_endpoint(settings)
    async with assemble(
        settings,
        routes=hook.routes() if hook else (),
        delivery=policy,
        clock=clock,
        models=models,
        routers=routers,
    ) as app:
        owners = OwnerBook(app.settings, app.home, channels=list(app.channels))
        channel = await attach_telegram(app, webhook=hook, tuning=tuning, owners=owners)
        app.health.mark_ready()
        yield Running(app, channel, tg)


async def eventually(predicate: Callable[[], Any], within: float = 5.0) -> None:
    """Wait until predicate() is truthy (for state the fake does not signal)."""
    async with asyncio.timeout(within):
        while not predicate():  # noqa: ASYNC110 (Lancelot's side has no event to await)
            await asyncio.sleep(0.01)
