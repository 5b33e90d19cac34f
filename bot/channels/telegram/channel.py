"""The Telegram channel: python-telegram-bot started by hand, owner-only, cards as HTML.

Lifecycle (an async context manager): initialize (getMe checks the token), start, publish the
command menu; then `listen()` hands on the updates kept from before a restart and either
deletes any webhook and long-polls, or registers the webhook; on exit the same steps undo in
reverse, and a failed start undoes what it had done. Every update is kept in the inbox
before Telegram is told it arrived (bot/channels/telegram/arrivals.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Self

import httpx
from telegram import BotCommand, Update
from telegram.constants import ChatAction
from telegram.error import InvalidToken, NetworkError, RetryAfter, TelegramError

from bot.channels.telegram import NAME
from bot.channels.telegram.application import TelegramTuning, build_application
from bot.channels.telegram.arrivals import Arrivals
from bot.channels.telegram.files import download, upload
from bot.channels.telegram.poller import ALLOWED_UPDATES, Poller
from bot.channels.telegram.presses import PressAnswers
from bot.channels.telegram.render import chunks, edit_chunk_of, keyboard
from bot.channels.telegram.sender import chat_number, edit_chunk, send_chunk, translated
from bot.channels.telegram.updates import UpdateRouter
from bot.channels.telegram.webhook import WebhookEndpoint
from bot.pairing import PairingGate
from core.bus import Bus
from core.config.settings import TelegramSettings
from core.delivery.inbox import Kept, UpdateInbox
from core.errors import ConfigError, DeliveryFailed, DeliveryRejected, LancelotError
from core.events import ButtonPress, Card, FileOffer, MessageRef
from core.runtime.backoff import Backoff, BackoffConfig
from core.runtime.tasks import Supervisor
from core.security.refusals import RefusalLog

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class WebhookMode:
    """Webhook mode: where Telegram posts, the route that receives it, and the secret."""

    url: str
    endpoint: WebhookEndpoint
    secret: str


class TelegramChannel:
    """Talks to the owner through a Telegram bot (a Channel, PartedChannel, PressAnswering,
    FileFetching and FileSending)."""

    name = NAME

    def __init__(
        self,
        bus: Bus,
        settings: TelegramSettings,
        *,
        refusals: RefusalLog,
        inbox: UpdateInbox,
        commands: Sequence[tuple[str, str]] = (),
        webhook: WebhookMode | None = None,
        tuning: TelegramTuning | None = None,
        tasks: Supervisor | None = None,
        on_recovered: Callable[[], None] | None = None,
        owners: Sequence[int] | None = None,
        pairing: PairingGate | None = None,
    ) -> None:
        """`on_recovered`: called when polling works again after an outage. `owners`: who
        the owner is (default TELEGRAM_OWNER_ID); `pairing`: where strangers' messages go
        while there is none (an owner who pairs is adopted at once)."""
        self._settings = settings
        self._supervisor = tasks or Supervisor()
        self._tuning = tuning or TelegramTuning()
        self._app, self._updates_request = build_application(settings, self._tuning)
        self._bot = self._app.bot
        self._commands = commands
        self._webhook = webhook
        self._refusals = refusals
        self._presses = PressAnswers(self._bot, self._tuning.press_fallback, tasks=self._supervisor)
        self._calls = asyncio.Semaphore(self._tuning.concurrent_calls)
        self._calls_wanted = 0  # sends, edits and files on their way or waiting for a slot
        # File downloads stream on their own client: PTB's would read a file whole.
        self._downloads = httpx.AsyncClient(
            timeout=httpx.Timeout(30.0, read=60.0), verify=self._tuning.verify_tls
        )
        self._owners = set(settings.owner_ids if owners is None else owners)
        self._router = UpdateRouter(bus, self._owners, self._presses, refusals, pairing)
        if pairing is not None:
            pairing.bind(self.adopt)
        # Kept updates are routed here directly: through PTB's update queue and handler
        # machinery each took a task switch and a CallbackContext it never used.
        self._arrivals = Arrivals(inbox, self._bot, self._route)
        self._on_recovered = on_recovered
        self._poller: Poller | None = None
        self._typing: dict[str, asyncio.Event] = {}  # set when a message reaches the chat
        self._typing_tasks: set[asyncio.Task[None]] = set()
        self._stack: AsyncExitStack | None = None

    @property
    def owner_chat_ids(self) -> tuple[str, ...]:
        """The owners' private chats (a private chat's id is the user's id)."""
        return tuple(str(owner) for owner in sorted(self._owners))

    def adopt(self, owner_id: str) -> None:
        """Treat `owner_id` (who just paired) as the owner from now on."""
        self._owners.add(int(owner_id))

    @property
    def poller(self) -> Poller | None:
        """The long poller (None in webhook mode or before start)."""
        return self._poller

    # lifecycle

    async def __aenter__(self) -> Self:
        async with AsyncExitStack() as stack:
            stack.push_async_callback(self._downloads.aclose)
            await self._initialize()
            stack.push_async_callback(self._app.shutdown)
            stack.push_async_callback(self._presses.close)
            await self._app.start()
            stack.push_async_callback(self._app.stop)
            stack.push_async_callback(self._stop_typing)
            await self._publish_commands()
            self._stack = stack.pop_all()
        return self

    async def listen(self) -> tuple[Kept, ...]:
        """Hand on the updates kept but not handled before a restart, then start receiving
        (long polling or the webhook). Returns the kept updates set aside for good (cut short
        too often). Call it once the outbox has resumed, so a reply already queued for an
        update handled again is recognised. Raises ConfigError when setWebhook fails."""
        assert self._stack is not None, "enter the channel first"
        abandoned = await self._arrivals.replay()
        if self._webhook is not None:
            await self._start_webhook(self._stack, self._webhook)
        else:
            await self._start_polling(self._stack)
        log.info("telegram: serving as @%s", self._bot.username)
        return abandoned

    async def _route(self, update: Update) -> None:
        """Hand one kept update to the core; an update nothing will handle is marked done.
        A failure is logged and leaves the update open (a restart hands it on again)."""
        try:
            if not await self._router.handle(update):
                await self._arrivals.settle(update)
        except Exception:
            log.exception("telegram: handling an update failed")

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._stack is not None:
            await self._stack.aclose()
            self._stack = None

    async def _initialize(self) -> None:
        """getMe, until it answers: a Bot API that cannot be reached yet (a machine starting
        before its network, an outage) is tried again with backoff, not a reason to exit; a
        rejected token is (ConfigError), as is any other refusal (DeliveryFailed)."""
        delays = Backoff(
            BackoffConfig(self._tuning.poll_backoff_base, self._tuning.poll_backoff_cap)
        )
        while True:
            try:
                await self._app.initialize()
                return
            except InvalidToken:
                await self._bot.shutdown()
                raise ConfigError(
                    "telegram: the Bot API server rejected TELEGRAM_BOT_TOKEN"
                ) from None
            except (NetworkError, RetryAfter) as exc:
                await self._bot.shutdown()
                wait = _seconds(exc.retry_after) if isinstance(exc, RetryAfter) else next(delays)
                log.warning(
                    "telegram: cannot reach the Bot API yet (%s); trying again in %.1f s",
                    exc.message,
                    wait,
                )
                await asyncio.sleep(wait)
            except TelegramError as exc:
                await self._bot.shutdown()
                raise DeliveryFailed(f"telegram: cannot reach the Bot API: {exc.message}") from None

    async def _publish_commands(self) -> None:
        menu = [BotCommand(name, summary[:256] or name) for name, summary in self._commands]
        try:
            await self._bot.set_my_commands(menu)
        except TelegramError as exc:
            log.warning("telegram: could not publish the command menu: %s", exc.message)

    async def _start_polling(self, stack: AsyncExitStack) -> None:
        with contextlib.suppress(TelegramError):  # the poller deletes it later if need be
            await self._bot.delete_webhook()
        tuning = self._tuning
        self._poller = Poller(
            self._bot,
            self._updates_request,
            self._arrivals.take,
            watchdog=self._settings.watchdog_seconds,
            poll_timeout=tuning.poll_timeout,
            backoff_base=tuning.poll_backoff_base,
            backoff_cap=tuning.poll_backoff_cap,
            tasks=self._supervisor,
            on_recovered=self._on_recovered,
        )
        await self._poller.start()
        stack.push_async_callback(self._poller.stop)

    async def _start_webhook(self, stack: AsyncExitStack, mode: WebhookMode) -> None:
        mode.endpoint.bind(self._bot, self._arrivals.take_one, mode.secret, self._refusals)
        stack.callback(mode.endpoint.unbind)
        try:
            await self._bot.set_webhook(
                mode.url, secret_token=mode.secret, allowed_updates=ALLOWED_UPDATES
            )
        except TelegramError as exc:
            raise ConfigError(f"telegram: setWebhook failed: {exc.message}") from None

    async def health(self) -> str | None:
        """A health check: the poller's watchdog (webhook mode has nothing to watch)."""
        return await self._poller.health() if self._poller is not None else None

    # Channel

    def parts(self, card: Card) -> int:
        """Messages this card takes (4096 characters each)."""
        return len(chunks(card))

    async def deliver_part(self, chat_id: str, card: Card, part: int) -> MessageRef:
        """Send one part; the last carries the inline keyboard."""
        pieces = chunks(card)
        if not 0 <= part < len(pieces):
            raise DeliveryRejected(f"this card has no part {part}")
        self._stop_typing_in(chat_id)
        markup = keyboard(card) if part == len(pieces) - 1 else None
        async with self._call():
            message_id = await send_chunk(self._bot, chat_id, pieces[part], markup)
        return MessageRef(NAME, chat_id, str(message_id))

    async def deliver(self, chat_id: str, card: Card) -> MessageRef:
        """Send every part (without the outbox's bookkeeping); return the last."""
        ref = None
        for part in range(self.parts(card)):
            ref = await self.deliver_part(chat_id, card, part)
        assert ref is not None  # a card has at least one part
        return ref

    async def edit(self, ref: MessageRef, card: Card) -> None:
        """Replace the message's text and keyboard (no keyboard if the card has no buttons)."""
        async with self._call():
            await edit_chunk(
                self._bot, ref.chat_id, ref.message_id, edit_chunk_of(card), keyboard(card)
            )

    def fetch_file(self, offer: FileOffer) -> AsyncIterator[bytes]:
        """A file the owner sent (getFile, then the download through the Bot API base)."""
        return download(self._bot, self._downloads, offer.ref)

    async def send_file(
        self, chat_id: str, path: Path, caption: str, *, as_photo: bool = False
    ) -> MessageRef:
        """sendPhoto or sendDocument; the message that shows the file."""
        self._stop_typing_in(chat_id)
        async with self._call():
            message = await upload(self._bot, chat_id, path, caption, as_photo=as_photo)
        return MessageRef(NAME, chat_id, str(message.message_id))

    def is_group(self, chat_id: str) -> bool:
        """Group and supergroup chats have negative ids on Telegram; users have positive ones."""
        return chat_id.startswith("-")

    async def answer_press(self, press: ButtonPress, *, accepted: bool, note: str = "") -> None:
        """Stop the button's spinner; a refused press shows `note` as a toast."""
        if press.press_id:
            self._presses.answer(press.press_id, note)

    async def typing(self, chat_id: str) -> None:
        """Show "typing…" if the work takes longer than a moment (never blocks)."""
        if chat_id in self._typing:
            return
        answered = self._typing[chat_id] = asyncio.Event()
        typing = self._type_unless(chat_id, answered)
        task = self._supervisor.spawn(typing, name="tg-typing", report=False)
        self._typing_tasks.add(task)
        task.add_done_callback(self._typing_tasks.discard)

    async def _type_unless(self, chat_id: str, answered: asyncio.Event) -> None:
        # Waits on an event rather than being cancelled, so a chat action is never cut off
        # halfway through its request.
        try:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self._tuning.typing_delay):
                    await answered.wait()
            # Cosmetic: sent only while nothing else is on its way to Telegram. Under a burst
            # every connection is wanted for replies, and a chat action costs what one does.
            if not answered.is_set() and self._calls_wanted == 0:
                async with self._call():
                    with contextlib.suppress(LancelotError), translated("sendChatAction"):
                        await self._bot.send_chat_action(chat_number(chat_id), ChatAction.TYPING)
        finally:
            if self._typing.get(chat_id) is answered:
                del self._typing[chat_id]

    @contextlib.asynccontextmanager
    async def _call(self) -> AsyncIterator[None]:
        """One of the Bot API calls in flight at once (counted while it waits for a slot)."""
        self._calls_wanted += 1
        try:
            async with self._calls:
                yield
        finally:
            self._calls_wanted -= 1

    def _stop_typing_in(self, chat_id: str) -> None:
        answered = self._typing.pop(chat_id, None)
        if answered is not None:
            answered.set()

    async def _stop_typing(self) -> None:
        for answered in self._typing.values():
            answered.set()
        self._typing.clear()
        await asyncio.gather(*self._typing_tasks, return_exceptions=True)


def _seconds(retry_after: object) -> float:
    """RetryAfter.retry_after in seconds (an int, or a timedelta in newer releases)."""
    total = getattr(retry_after, "total_seconds", None)
    return float(total() if callable(total) else retry_after)  # type: ignore[arg-type]
