"""FakeGoogle: Google's certificate URLs, the OAuth2 token endpoint, the Chat REST API
(spaces.messages.create with threads and requestId, messages.update) and an incoming webhook,
on 127.0.0.1. Lancelot's real google-auth and aiohttp code talk to it through its settings.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import secrets
from collections import deque
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any, Self
from urllib.parse import parse_qs

from aiohttp import web

from .cards import BadMessage, check_message
from .keys import SigningKey, claims_of
from .state import Fault, StoredMessage, all_actions, content, error, fault_response

SA_EMAIL = "lancelot@lancelot-test.iam.gserviceaccount.com"
CHAT_BOT_SCOPE = "https://www.googleapis.com/auth/chat.bot"


class FakeGoogle:
    """One Google Cloud project with a Chat app, its keys, and its spaces."""

    def __init__(self, *, cert_max_age: int = 3600) -> None:
        self.chat_key = SigningKey("chat@system.gserviceaccount.com")
        self.id_key = SigningKey("accounts.google.com")
        self.sa_key = SigningKey(SA_EMAIL)
        self.cert_max_age = cert_max_age
        self.cert_fetches = {"chat": 0, "oauth2": 0}
        self.tokens_issued = 0
        self.messages: dict[str, StoredMessage] = {}
        self.calls: list[tuple[str, str, dict[str, str]]] = []
        self.faults: deque[Fault] = deque()
        self.outage: int | None = None  # every Chat API and webhook call answers this status
        self.certs_down = False  # the certificate URLs answer 503
        self.webhook_key = secrets.token_urlsafe(8)
        self.webhook_token = secrets.token_urlsafe(8)
        self.webhook_space = "spaces/WEBHOOK"
        self._access_tokens: set[str] = set()
        self.media: dict[str, bytes] = {}  # attachments uploaded to Chat, by resource name
        self.media_downloads: list[str] = []
        self._threads: dict[tuple[str, str], str] = {}
        self._request_ids: dict[tuple[str, str], str] = {}
        self._ids = itertools.count(1)
        self._changed = asyncio.Condition()
        self._runner: web.AppRunner | None = None
        self.base_url = ""

    async def __aenter__(self) -> Self:
        app = web.Application()
        app.add_routes(
            [
                web.get("/certs/chat", self._chat_certs),
                web.get("/certs/oauth2", self._oauth2_certs),
                web.post("/token", self._token),
                web.post("/v1/spaces/{space}/messages", self._create),
                web.patch("/v1/spaces/{space}/messages/{message}", self._update),
                web.post("/webhook/spaces/{space}/messages", self._webhook),
                web.get("/v1/media/{resource:.+}", self._media),
            ]
        )
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.base_url = f"http://127.0.0.1:{port}"
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    # what Lancelot is configured with

    @property
    def chat_certs_url(self) -> str:
        return f"{self.base_url}/certs/chat"

    @property
    def oauth2_certs_url(self) -> str:
        return f"{self.base_url}/certs/oauth2"

    @property
    def api_base_url(self) -> str:
        return f"{self.base_url}/v1"

    @property
    def webhook_url(self) -> str:
        return (
            f"{self.base_url}/webhook/{self.webhook_space}/messages"
            f"?key={self.webhook_key}&token={self.webhook_token}"
        )

    def write_service_account(self, path: Path) -> Path:
        """A service-account key file whose token_uri is this fake."""
        info = {
            "type": "service_account",
            "project_id": "lancelot-test",
            "private_key_id": self.sa_key.kid,
            "private_key": self.sa_key.private_pem,
            "client_email": SA_EMAIL,
            "client_id": "1234567890",
            "token_uri": f"{self.base_url}/token",
        }
        path.write_text(json.dumps(info))
        return path

    # the screen

    def in_space(self, space: str) -> list[StoredMessage]:
        """Messages in a space, oldest first."""
        return [m for m in self.messages.values() if m.space == space]

    async def answered(self, space: str, thread: str, body: dict[str, Any]) -> StoredMessage:
        """Chat posts an app's synchronous answer as a new message (the user's phone calls
        this with what Lancelot answered)."""
        message = self._store(space, thread, content(body), "answer")
        await self._notify()
        return message

    async def replaced(self, name: str, body: dict[str, Any]) -> None:
        """Chat replaces a clicked card with the UPDATE_MESSAGE answer."""
        self.messages[name].body = content(body)
        self.messages[name].edits += 1
        await self._notify()

    async def wait_for(self, predicate: Callable[[], Any], timeout: float = 10.0) -> None:
        """Wait until predicate() holds (checked after every change)."""
        async with asyncio.timeout(timeout), self._changed:
            await self._changed.wait_for(predicate)

    # handlers

    async def _certs(self, key: SigningKey, which: str) -> web.Response:
        self.cert_fetches[which] += 1
        if self.certs_down:
            return error(503, "UNAVAILABLE")
        return web.json_response(
            {key.kid: key.certificate_pem},
            headers={"Cache-Control": f"public, max-age={self.cert_max_age}"},
        )

    async def _chat_certs(self, request: web.Request) -> web.Response:
        return await self._certs(self.chat_key, "chat")

    async def _oauth2_certs(self, request: web.Request) -> web.Response:
        return await self._certs(self.id_key, "oauth2")

    async def _token(self, request: web.Request) -> web.Response:
        form = parse_qs((await request.read()).decode())
        assertion = form.get("assertion", [""])[0]
        grant = form.get("grant_type", [""])[0]
        if grant != "urn:ietf:params:oauth:grant-type:jwt-bearer" or not self.sa_key.verifies(
            assertion
        ):
            return web.json_response({"error": "invalid_grant"}, status=400)
        claims = claims_of(assertion)
        if claims.get("iss") != SA_EMAIL or CHAT_BOT_SCOPE not in claims.get("scope", ""):
            return web.json_response({"error": "invalid_scope"}, status=400)
        token = secrets.token_urlsafe(16)
        self._access_tokens.add(token)
        self.tokens_issued += 1
        return web.json_response(
            {"access_token": token, "expires_in": 3600, "token_type": "Bearer"}
        )

    def _authorized(self, request: web.Request) -> bool:
        scheme, _, token = request.headers.get("Authorization", "").partition(" ")
        return scheme == "Bearer" and token in self._access_tokens

    def upload(self, space: str, content: bytes) -> str:
        """The owner uploads a file to a message in `space`; its attachmentDataRef name."""
        name = f"{space}/attachments/{secrets.token_urlsafe(12)}"
        self.media[name] = content
        return name

    async def _media(self, request: web.Request) -> web.StreamResponse:
        """media.download: the bytes of an uploaded attachment, for the app only."""
        if self.outage is not None:
            return error(self.outage, "UNAVAILABLE")
        if not self._authorized(request):
            return error(401, "UNAUTHENTICATED")
        if request.query.get("alt") != "media":
            return error(400, "INVALID_ARGUMENT")
        name = request.match_info["resource"]
        content = self.media.get(name)
        if content is None:
            return error(404, "NOT_FOUND")
        self.media_downloads.append(name)
        return web.Response(body=content, content_type="application/octet-stream")

    async def _create(self, request: web.Request) -> web.Response:
        space = f"spaces/{request.match_info['space']}"
        query = dict(request.query)
        self.calls.append(("create", space, query))
        if self.outage is not None:
            return error(self.outage, "UNAVAILABLE")
        if not self._authorized(request):
            return error(401, "UNAUTHENTICATED")
        body = await request.json()
        fault = self.faults.popleft() if self.faults else None
        if fault is not None and not fault.after:
            return fault_response(fault)
        request_id = query.get("requestId", "")
        known = self._request_ids.get((space, request_id)) if request_id else None
        if known is not None:
            return web.json_response(self._json(self.messages[known]))
        try:
            check_message(body)
        except BadMessage as exc:
            return error(400, f"INVALID_ARGUMENT: {exc}")
        thread = self._thread(space, body.get("thread") or {}, query.get("messageReplyOption"))
        message = self._store(space, thread, content(body), "api", request_id)
        if request_id:
            self._request_ids[(space, request_id)] = message.name
        await self._notify()
        if fault is not None:
            return fault_response(fault)
        return web.json_response(self._json(message))

    async def _update(self, request: web.Request) -> web.Response:
        name = f"spaces/{request.match_info['space']}/messages/{request.match_info['message']}"
        self.calls.append(("update", name, dict(request.query)))
        if self.outage is not None:
            return error(self.outage, "UNAVAILABLE")
        if not self._authorized(request):
            return error(401, "UNAUTHENTICATED")
        fault = self.faults.popleft() if self.faults else None
        if fault is not None:
            return fault_response(fault)
        message = self.messages.get(name)
        if message is None or message.via == "webhook":
            return error(404 if message is None else 403, "cannot update")
        body = await request.json()
        mask = request.query.get("updateMask", "").split(",")
        updated = dict(message.body)
        for key in ("text", "cardsV2"):
            if key in mask:
                updated[key] = body.get(key, "" if key == "text" else [])
        try:
            check_message(updated)
        except BadMessage as exc:
            return error(400, f"INVALID_ARGUMENT: {exc}")
        message.body = updated
        message.edits += 1
        await self._notify()
        return web.json_response(self._json(message))

    async def _webhook(self, request: web.Request) -> web.Response:
        space = f"spaces/{request.match_info['space']}"
        self.calls.append(("webhook", space, dict(request.query)))
        if self.outage is not None:
            return error(self.outage, "UNAVAILABLE")
        if (request.query.get("key"), request.query.get("token")) != (
            self.webhook_key,
            self.webhook_token,
        ):
            return error(403, "PERMISSION_DENIED")
        fault = self.faults.popleft() if self.faults else None
        if fault is not None:
            return fault_response(fault)
        body = await request.json()
        try:
            check_message(body)
        except BadMessage as exc:
            return error(400, f"INVALID_ARGUMENT: {exc}")
        for button in all_actions(body):
            return error(400, f"INVALID_ARGUMENT: webhook messages cannot call {button}")
        thread = self._thread(
            space, body.get("thread") or {}, request.query.get("messageReplyOption")
        )
        message = self._store(space, thread, content(body), "webhook")
        await self._notify()
        return web.json_response(self._json(message))

    # state

    def _thread(self, space: str, thread: dict[str, str], option: str | None) -> str:
        name = thread.get("name", "")
        if name and option and name.startswith(f"{space}/threads/"):
            return name
        key = thread.get("threadKey", "")
        if key and option:
            return self._threads.setdefault((space, key), f"{space}/threads/{next(self._ids)}")
        return f"{space}/threads/{next(self._ids)}"

    def _store(
        self, space: str, thread: str, body: dict[str, Any], via: str, request_id: str = ""
    ) -> StoredMessage:
        name = f"{space}/messages/m{next(self._ids)}"
        message = StoredMessage(name, space, thread, body, via, request_id)
        self.messages[name] = message
        return message

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    def _json(self, message: StoredMessage) -> dict[str, Any]:
        return {
            **message.body,
            "name": message.name,
            "space": {"name": message.space},
            "thread": {"name": message.thread},
        }
