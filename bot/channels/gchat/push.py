"""Asynchronous push: the Chat REST API as the app (a service account), or an incoming webhook.

spaces.messages.create carries a requestId, so a retry after a lost response returns the
message already made instead of a second one; messages.update (PATCH) edits in place.
HTTP failures become the error tree: 429 and 5xx are transient (the outbox backs off and
retries), other refusals permanent.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import aiohttp
from google.auth import exceptions as google_errors
from google.auth.transport.requests import Request as GoogleRequest
from google.oauth2 import service_account

from bot.channels.gchat.render import Message
from core.errors import ConfigError, DeliveryFailed, DeliveryRejected, RateLimited

log = logging.getLogger(__name__)

CHAT_BOT_SCOPE = "https://www.googleapis.com/auth/chat.bot"
REPLY_OPTION = "REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD"
TIMEOUT = aiohttp.ClientTimeout(total=30)
MEDIA_TIMEOUT = aiohttp.ClientTimeout(total=None, sock_connect=30, sock_read=60)
MEDIA_CHUNK = 64 * 1024


@dataclass(frozen=True, slots=True)
class Thread:
    """Where a message goes: an existing thread (name) or one named by the app (key)."""

    name: str = ""
    key: str = ""

    def as_json(self) -> dict[str, str]:
        """The Message.thread object."""
        return {"name": self.name} if self.name else {"threadKey": self.key}


def load_credentials(path: Path) -> service_account.Credentials:
    """The service account from its JSON key file (token_uri says where tokens come from)."""
    try:
        credentials: service_account.Credentials = (
            service_account.Credentials.from_service_account_file(  # type: ignore[no-untyped-call]
                str(path), scopes=[CHAT_BOT_SCOPE]
            )
        )
    except (OSError, ValueError, google_errors.GoogleAuthError) as exc:
        raise ConfigError(
            f"gchat: GCHAT_SERVICE_ACCOUNT_FILE cannot be used: {type(exc).__name__}"
        ) from None
    return credentials


async def _raise_for(response: aiohttp.ClientResponse, what: str) -> None:
    if response.status < 400:
        return
    body = (await response.text())[:200]
    if response.status == 429:
        retry_after = response.headers.get("Retry-After", "")
        if retry_after.isdigit():
            raise RateLimited(float(retry_after))
        raise DeliveryFailed(f"gchat: {what}: rate limited (429)")
    if response.status >= 500 or response.status in (401, 408):
        raise DeliveryFailed(f"gchat: {what}: HTTP {response.status}")
    raise DeliveryRejected(f"gchat: {what}: HTTP {response.status}: {body}")


class ChatApi:
    """spaces.messages.create and messages.update, authenticated as the Chat app."""

    def __init__(self, session: aiohttp.ClientSession, base_url: str, credentials: Any) -> None:
        self._session = session
        self._base = base_url.rstrip("/")
        self._credentials = credentials
        self._lock = asyncio.Lock()

    async def _headers(self) -> dict[str, str]:
        async with self._lock:
            if not self._credentials.valid:
                try:
                    # google-auth's transport is synchronous: refresh in a thread.
                    await asyncio.to_thread(self._credentials.refresh, GoogleRequest())
                except google_errors.GoogleAuthError as exc:
                    raise DeliveryFailed(f"gchat: no access token: {type(exc).__name__}") from None
        return {"Authorization": f"Bearer {self._credentials.token}"}

    async def create(
        self, space: str, message: Message, *, request_id: str, thread: Thread
    ) -> dict[str, Any]:
        """Post a message in `space` (in `thread`); returns the created Message."""
        params = {"requestId": request_id, "messageReplyOption": REPLY_OPTION}
        body = {**message, "thread": thread.as_json()}
        url = f"{self._base}/{quote(space, safe='/')}/messages"
        return await self._call("POST", url, params, body, "messages.create")

    async def update(self, name: str, message: Message) -> None:
        """Replace a message's cards (messages.update with an updateMask)."""
        url = f"{self._base}/{quote(name, safe='/')}"
        params = {"updateMask": "text,cardsV2"}
        await self._call("PATCH", url, params, {"text": "", **message}, "messages.update")

    async def download(self, resource_name: str) -> AsyncIterator[bytes]:
        """An attachment's bytes (media.download, alt=media), in chunks as they arrive."""
        url = f"{self._base}/media/{quote(resource_name, safe='/')}"
        headers = await self._headers()
        try:
            async with self._session.get(
                url, params={"alt": "media"}, headers=headers, timeout=MEDIA_TIMEOUT
            ) as response:
                await _raise_for(response, "media.download")
                async for chunk in response.content.iter_chunked(MEDIA_CHUNK):
                    yield chunk
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise DeliveryFailed(f"gchat: media.download: {type(exc).__name__}") from None

    async def _call(
        self, method: str, url: str, params: dict[str, str], body: Message, what: str
    ) -> dict[str, Any]:
        headers = await self._headers()
        try:
            async with self._session.request(
                method, url, params=params, json=body, headers=headers, timeout=TIMEOUT
            ) as response:
                if response.status == 401:
                    self._credentials.token = None  # expired early: fetch a new one next time
                await _raise_for(response, what)
                data = await response.json(content_type=None)
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise DeliveryFailed(f"gchat: {what}: {type(exc).__name__}") from None
        if not isinstance(data, dict):
            raise DeliveryFailed(f"gchat: {what}: unexpected answer")
        return data


class WebhookPush:
    """An incoming webhook: posts into the one space it belongs to, no buttons that call back,
    no edits, no requestId (a retry after a lost answer can repeat a message)."""

    def __init__(self, session: aiohttp.ClientSession, url: str) -> None:
        self._session = session
        self._url = url

    async def create(self, message: Message, *, thread: Thread) -> dict[str, Any]:
        """Post a message; returns the created Message."""
        body = {**message, "thread": thread.as_json()}
        try:
            async with self._session.post(
                self._url,
                params={"messageReplyOption": REPLY_OPTION},
                json=body,
                timeout=TIMEOUT,
            ) as response:
                await _raise_for(response, "webhook")
                data = await response.json(content_type=None)
        except (aiohttp.ClientError, TimeoutError) as exc:
            # The URL holds the webhook's key and token: never in an error message.
            raise DeliveryFailed(f"gchat: webhook: {type(exc).__name__}") from None
        if not isinstance(data, dict):
            raise DeliveryFailed("gchat: webhook: unexpected answer")
        return data
