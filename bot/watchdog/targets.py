"""Where the watchdog's messages go: the Telegram owner through the Bot API's sendMessage,
and Google Chat through its existing push (webhook or the Chat API as the app). Each send
raises the error tree: RateLimited, DeliveryFailed (try again), DeliveryRejected (never)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Protocol

import aiohttp

from bot.watchdog.config import GchatAddress, TelegramAddress
from core.errors import DeliveryFailed, DeliveryRejected, RateLimited, StorageError
from core.security.owners import OwnerStore

log = logging.getLogger(__name__)

TIMEOUT = aiohttp.ClientTimeout(total=20)
THREAD = "lancelot-watchdog"  # Google Chat: the watchdog's messages share one thread


class Target(Protocol):
    """One way to the owner."""

    name: str

    def recipients(self) -> tuple[str, ...]:
        """The chats to tell now (read each time: an owner may pair while it watches)."""
        ...

    async def send(self, chat: str, text: str, ident: str) -> None:
        """Send `text` to `chat`; `ident` names this message for a platform that can make
        a retry idempotent."""
        ...


class TelegramTarget:
    """sendMessage to each owner, plain text, nothing else."""

    name = "telegram"

    def __init__(self, address: TelegramAddress, home: Path, session: aiohttp.ClientSession):
        self._address = address
        self._owners = OwnerStore(home)
        self._session = session

    def recipients(self) -> tuple[str, ...]:
        """TELEGRAM_OWNER_ID, else the owner who paired (none: nobody to tell yet)."""
        if self._address.owner_ids:
            return tuple(str(owner) for owner in self._address.owner_ids)
        try:
            paired = self._owners.get("telegram")
        except StorageError as exc:
            log.warning("no Telegram owner: %s", exc)
            return ()
        return (paired.owner_id,) if paired is not None else ()

    async def send(self, chat: str, text: str, ident: str) -> None:
        """One sendMessage call; its answer read as the Bot API defines it."""
        token = self._address.token.get_secret_value()
        url = f"{self._address.base_url}{token}/sendMessage"
        try:
            async with self._session.post(
                url, json={"chat_id": _chat_id(chat), "text": text}, timeout=TIMEOUT
            ) as response:
                status = response.status
                body = await response.json(content_type=None)
        except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
            # The URL holds the token: only the error's kind is told.
            raise DeliveryFailed(f"telegram: sendMessage: {type(exc).__name__}") from None
        _raise_for(status, body if isinstance(body, dict) else {})


def _chat_id(chat: str) -> int | str:
    """A numeric id as the number the Bot API documents (an owner id is one)."""
    return int(chat) if chat.removeprefix("-").isdigit() else chat


def _raise_for(status: int, body: dict[str, Any]) -> None:
    """Nothing for an answer with ok; else the error the Bot API's answer means."""
    if status == 200 and body.get("ok") is True:
        return
    said = str(body.get("description") or "no description")[:200]
    parameters = body.get("parameters")
    retry_after = parameters.get("retry_after") if isinstance(parameters, dict) else None
    if status == 429 and isinstance(retry_after, int | float):
        raise RateLimited(float(retry_after))
    if status >= 500 or status in (200, 429):
        raise DeliveryFailed(f"telegram: sendMessage: HTTP {status}: {said}")
    raise DeliveryRejected(f"telegram: sendMessage: HTTP {status}: {said}")


class GchatTarget:
    """Google Chat: the incoming webhook, or spaces.messages.create into GCHAT_SPACE."""

    name = "gchat"

    def __init__(self, address: GchatAddress, session: aiohttp.ClientSession) -> None:
        # google-auth loads only when Google Chat is configured.
        from bot.channels.gchat.push import ChatApi, Thread, WebhookPush, load_credentials

        self._thread = Thread(key=THREAD)
        self._space = address.space or ""
        self._webhook = None
        self._api = None
        if address.webhook_url is not None:
            self._webhook = WebhookPush(session, address.webhook_url.get_secret_value())
        elif address.service_account_file is not None:
            credentials = load_credentials(address.service_account_file)
            self._api = ChatApi(session, address.api_base_url, credentials)

    def recipients(self) -> tuple[str, ...]:
        """The webhook's space, or GCHAT_SPACE."""
        return ("webhook",) if self._webhook is not None else (self._space,)

    async def send(self, chat: str, text: str, ident: str) -> None:
        """One message in the watchdog's thread (the Chat API's requestId: `ident`)."""
        if self._webhook is not None:
            await self._webhook.create({"text": text}, thread=self._thread)
        elif self._api is not None:
            await self._api.create(chat, {"text": text}, request_id=ident, thread=self._thread)
