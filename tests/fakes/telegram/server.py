"""FakeTelegram: a local Bot API server that the real python-telegram-bot talks to via base_url."""

from __future__ import annotations

import contextlib
import enum
import time
from collections import defaultdict, deque
from collections.abc import Callable
from types import TracebackType
from typing import Any, Self

import aiohttp
from aiohttp import web

from . import account, files, messages, objects, phone, webhook
from .errors import ApiError, injected_error
from .params import Params
from .reply import Method, Reply
from .state import AnsweredCallback, Call, ChatAction, SentMessage, TelegramState

DEFAULT_TOKEN = "123456:TEST-fake-token"
DEFAULT_USER_ID = 1001
METHODS: dict[str, Method] = {**account.METHODS, **messages.METHODS, **files.METHODS}  # lower


class _Registered(enum.Enum):
    SECRET = enum.auto()


REGISTERED_SECRET = _Registered.SECRET
"""post_webhook's default: send the secret_token the bot registered with setWebhook."""


class FakeTelegram:
    """One bot account on a fake Telegram, served on 127.0.0.1 with an ephemeral port.

    `async with FakeTelegram() as tg:` then give the bot `tg.base_url`. Drive it like a phone
    (`user_message`, `press_button`), break it on purpose (`fail_next`, `set_delay`,
    `go_down`), and read what the bot did (`sent`, `calls`, `answered_callbacks`, ...).
    """

    def __init__(
        self,
        token: str = DEFAULT_TOKEN,
        *,
        bot_username: str = "lancelot_test_bot",
        bot_name: str = "Lancelot",
    ) -> None:
        self.token = token
        prefix = token.split(":", 1)[0]
        me = objects.user(int(prefix) if prefix.isdigit() else 123456, bot_name, bot_username)
        me["is_bot"] = True
        me.pop("language_code")
        self._state = TelegramState(me=me)
        self._state.interrupted = lambda: self._down or self._closing
        self._faults: defaultdict[str, deque[ApiError]] = defaultdict(deque)
        self._delays: dict[str, float] = {}
        self._down = False
        self._closing = False
        self._runner: web.AppRunner | None = None
        self._session: aiohttp.ClientSession | None = None
        self.port = 0

    # lifecycle

    async def __aenter__(self) -> Self:
        app = web.Application()
        app.router.add_route("*", "/bot{token}/{method}", self._handle)
        app.router.add_get("/file/bot{token}/{path:.+}", self._file)
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await runner.setup()
        try:
            await web.TCPSite(runner, "127.0.0.1", 0).start()
            self.port = runner.addresses[0][1]
            self._session = aiohttp.ClientSession()
        except BaseException:
            await runner.cleanup()
            raise
        self._runner = runner
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._closing = True  # long polls and held responses return now
        self._state.signal.notify()
        if self._session is not None:
            await self._session.close()
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def base_url(self) -> str:
        """What to pass as python-telegram-bot's base_url; it appends the token itself."""
        return f"http://127.0.0.1:{self.port}/bot"

    # faults

    def fail_next(
        self,
        method: str,
        status: int = 429,
        *,
        retry_after: int | None = None,
        description: str | None = None,
        migrate_to_chat_id: int | None = None,
        times: int = 1,
    ) -> None:
        """Make the next `times` calls of `method` fail as Telegram would with this status.

        429 carries parameters.retry_after (default 1 s); 5xx answer with a non-JSON body like
        Telegram's front proxy; migrate_to_chat_id gives the "upgraded to a supergroup" 400.
        """
        error = injected_error(status, description, retry_after, migrate_to_chat_id)
        self._faults[method.lower()].extend([error] * times)

    def set_delay(self, method: str, seconds: float) -> None:
        """Hold every response of `method` for `seconds` after the call took effect (0 ends it)."""
        self._delays[method.lower()] = seconds

    def go_down(self) -> None:
        """Outage: every call, including waiting long polls, gets 502 Bad Gateway."""
        self._down = True
        self._state.signal.notify()

    def come_back(self) -> None:
        self._down = False

    # the phone

    def user_message(
        self,
        text: str,
        *,
        user_id: int = DEFAULT_USER_ID,
        chat_id: int | None = None,
        first_name: str = "Owner",
        username: str | None = "owner",
    ) -> dict[str, Any]:
        """A user sends text (a /command gets its bot_command entity); returns the update."""
        return phone.send_text(
            self._state,
            text,
            user_id=user_id,
            chat_id=chat_id,
            first_name=first_name,
            username=username,
        )

    def press_button(
        self,
        message_id: int,
        callback_data: str,
        *,
        user_id: int = DEFAULT_USER_ID,
        chat_id: int | None = None,
        first_name: str = "Owner",
        username: str | None = "owner",
    ) -> str:
        """A user taps a button on a bot message now in the chat; returns the callback query id."""
        return phone.press_button(
            self._state,
            message_id,
            callback_data,
            user_id=user_id,
            chat_id=chat_id,
            first_name=first_name,
            username=username,
        )

    def user_file(
        self,
        kind: str,
        content: bytes | None,
        *,
        file_name: str | None = None,
        mime_type: str | None = None,
        caption: str | None = None,
        announced_size: int | None = None,
        ext: str = "",
        user_id: int = DEFAULT_USER_ID,
    ) -> dict[str, Any]:
        """A user sends a file: kind is photo, document, audio, video, voice, video_note or
        animation. `content=None` with `announced_size` is a file Telegram announces but
        never serves (a download of it would fail the test). Returns the update."""
        return files.send_file(
            self._state,
            kind,
            content,
            user_id=user_id,
            file_name=file_name,
            mime_type=mime_type,
            caption=caption,
            announced_size=announced_size,
            ext=ext,
        )

    def user_sends(
        self, content: dict[str, Any], *, user_id: int = DEFAULT_USER_ID
    ) -> dict[str, Any]:
        """A user sends something else, e.g. {"sticker": {...}} or {"location": {...}}."""
        return files.send_other(self._state, content, user_id=user_id)

    def user_edits(
        self, message_id: int, text: str, *, user_id: int = DEFAULT_USER_ID
    ) -> dict[str, Any]:
        """A user edits a message they sent (an edited_message update)."""
        return files.edit_text(self._state, message_id, text, user_id=user_id)

    @property
    def uploads(self) -> files.FileStore:
        """Files users sent, and `downloads`: which the bot fetched."""
        return self._state.uploads

    def enqueue_update(self, update: dict[str, Any]) -> dict[str, Any]:
        """Queue a crafted update as is (no checks); gets an update_id if it has none."""
        return self._state.updates.push_raw(update)

    async def deliver_webhook(self) -> list[int]:
        """Webhook mode: POST pending updates to the bot in order; returns the HTTP statuses.

        Delivered (2xx) updates are confirmed; the first failure stays pending and stops the run.
        """
        assert self._session is not None, "use FakeTelegram as an async context manager"
        return await webhook.deliver_pending(self._session, self._state.updates)

    async def post_webhook(
        self,
        update: dict[str, Any],
        *,
        secret: str | _Registered | None = REGISTERED_SECRET,
        url: str | None = None,
    ) -> int:
        """POST a crafted update to the webhook (or `url`); secret=None sends no secret header."""
        assert self._session is not None, "use FakeTelegram as an async context manager"
        hook = self._state.updates.webhook
        target = url or (hook.url if hook else None)
        if target is None:
            raise RuntimeError("no webhook is set and no url was given")
        if secret is REGISTERED_SECRET:
            secret = hook.secret_token if hook else None
        return await webhook.post_update(self._session, target, update, secret)

    # what the bot did

    @property
    def sent(self) -> list[SentMessage]:
        """Every message the bot sent, oldest first; edits show in place, deletions are flagged."""
        return list(self._state.sent)

    def messages_in(self, chat_id: int) -> list[SentMessage]:
        """The bot's messages a phone still shows in this chat."""
        return [m for m in self._state.sent if m["chat_id"] == chat_id and not m["deleted"]]

    @property
    def unconfirmed(self) -> set[int]:
        """Ids of the updates Telegram still holds: the bot has not confirmed them yet."""
        return {int(u["update_id"]) for u in self._state.updates.pending}

    @property
    def calls(self) -> list[Call]:
        """Every Bot API request, with its normalized params and the HTTP status it got."""
        return list(self._state.calls)

    @property
    def answered_callbacks(self) -> list[AnsweredCallback]:
        return list(self._state.answered_callbacks)

    @property
    def commands(self) -> list[dict[str, str]]:
        """The command menu for the default scope and language (setMyCommands)."""
        return list(self._state.commands.get(('{"type": "default"}', ""), []))

    @property
    def chat_actions(self) -> list[ChatAction]:
        return list(self._state.chat_actions)

    @property
    def pending_updates(self) -> list[dict[str, Any]]:
        """Updates not yet confirmed by getUpdates' offset or delivered to the webhook."""
        return list(self._state.updates.pending)

    @property
    def is_polling(self) -> bool:
        """A getUpdates long poll is parked on the server now (the bot is listening)."""
        return self._state.updates.polling

    async def wait_for_sent(
        self,
        count: int,
        timeout: float = 5.0,
    ) -> list[SentMessage]:
        """Wait until the bot has sent at least `count` messages; returns them all."""
        await self.wait_for(lambda: len(self._state.sent) >= count, timeout)
        return self.sent

    async def wait_for(
        self,
        predicate: Callable[[], bool],
        timeout: float = 5.0,
    ) -> None:
        """Wait until predicate() holds; it is re-checked on every change to the fake."""
        try:
            await self._state.signal.wait_until(predicate, timeout)
        except TimeoutError:
            recent = [f"{c.method} -> {c.status}" for c in self._state.calls[-10:]]
            raise TimeoutError(
                f"not met within {timeout}s; sent {len(self._state.sent)} message(s); "
                f"last calls: {recent}"
            ) from None

    # HTTP

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        if request.match_info["token"] != self.token:
            return ApiError(401, "Unauthorized").response()
        name = request.match_info["method"]
        params = Params({})
        try:
            params = await Params.from_request(request)
            response = _ok(await self._dispatch(name, params))
        except ApiError as error:
            response = error.response()
        self._state.calls.append(Call(name, params.values, response.status, time.monotonic()))
        self._state.signal.notify()
        await self._hold(name)
        return response

    async def _file(self, request: web.Request) -> web.StreamResponse:
        if request.match_info["token"] != self.token:
            return ApiError(401, "Unauthorized").response()
        if self._down:
            return ApiError(502, "Bad Gateway").response()
        return await files.download(self._state, request)

    async def _dispatch(self, name: str, params: Params) -> Any:
        self._raise_if_down()
        faults = self._faults.get(name.lower())
        if faults:
            raise faults.popleft()
        handler = METHODS.get(name.lower())
        if handler is None:
            raise ApiError(404, "Not Found")
        result = await handler(self._state, params)
        self._raise_if_down()  # the outage began while a long poll waited
        return result

    def _raise_if_down(self) -> None:
        if self._down:
            raise ApiError(502, "Bad Gateway")

    async def _hold(self, name: str) -> None:
        delay = self._delays.get(name.lower(), 0)
        if delay > 0:
            with contextlib.suppress(TimeoutError):
                await self._state.signal.wait_until(lambda: self._closing, delay)


def _ok(result: Any) -> web.Response:
    if isinstance(result, Reply):
        body = {"ok": True, "result": result.result, "description": result.description}
    else:
        body = {"ok": True, "result": result}
    return web.json_response(body)
