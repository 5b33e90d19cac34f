"""Long polling: our own getUpdates loop, with a watchdog that restarts it when it stalls.

We poll with our own getUpdates call rather than PTB's Updater because the watchdog needs
the time of the last successful call, a restart it controls, and backoff it can tune; the
Updater reports only failures. Each batch goes to the sink, which keeps it durably (the inbox);
only then is it confirmed, by the offset of the next getUpdates. A batch the sink could not
keep is not confirmed: Telegram sends it again.

After an outage the backoff is capped low (5 s by default): the first getUpdates that works
again is at most that late, and `on_recovered` is called (the outbox then sends its backlog
at once instead of waiting out its own backoff).

A restart never cancels a request in flight: each request is bounded by its own timeouts
anyway, so a restart cuts the backoff short, starts a new loop if the old one died, and
replaces the HTTP client (closing it fails the request still in it) only when the pool is
exhausted or a request outlived its timeouts.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence

from telegram import Update
from telegram.error import Conflict, InvalidToken, RetryAfter, TelegramError
from telegram.request import BaseRequest

from bot.channels.telegram.application import LancelotBot
from bot.channels.telegram.arrivals import Received
from bot.channels.telegram.sender import seconds
from core.errors import LancelotError
from core.runtime.backoff import BackoffConfig
from core.runtime.tasks import Supervisor

log = logging.getLogger(__name__)

ALLOWED_UPDATES = ("message", "edited_message", "callback_query")
POOL_EXHAUSTED = "pool timeout"
REQUEST_SLACK = 30.0  # beyond the long-poll and read timeouts, a request counts as wedged

Sink = Callable[[Sequence[Received]], Awaitable[None]]


class Poller:
    """getUpdates in a loop; `health()` names the silence when it outlasts the watchdog."""

    def __init__(
        self,
        bot: LancelotBot,
        request: BaseRequest,
        sink: Sink,
        *,
        watchdog: float,
        poll_timeout: float = 25.0,
        backoff_base: float = 1.0,
        backoff_cap: float = 5.0,
        tasks: Supervisor | None = None,
        on_recovered: Callable[[], None] | None = None,
    ) -> None:
        """`on_recovered` is called when getUpdates works again after failures."""
        self._bot = bot
        self._supervisor = tasks or Supervisor()
        self._request = request  # the getUpdates HTTP client, replaced when wedged
        self._sink = sink
        self._on_recovered = on_recovered
        self._watchdog = watchdog
        # A long poll that ends empty is a success; it must end well within the watchdog.
        poll = min(poll_timeout, watchdog / 3)
        self._timeout = int(poll) if float(poll).is_integer() else poll  # whole seconds as int
        self._read_timeout = poll + (request.read_timeout or 0)  # as PTB's get_updates sets it
        self._request_limit = self._read_timeout + REQUEST_SLACK
        self._backoff = BackoffConfig(backoff_base, backoff_cap)
        self._offset: int | None = None
        self._fatal: str | None = None
        self._in_request_since: float | None = None
        self._pool_exhausted = False
        self._kick = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._watch_task: asyncio.Task[None] | None = None
        self.last_success = time.monotonic()
        self._restarted_at = self.last_success
        self.restarts = 0

    async def start(self) -> None:
        """Start polling and watching."""
        self._task = self._supervisor.spawn(self._poll_forever(), name="telegram-poller")
        self._watch_task = self._supervisor.spawn(self._watch_forever(), name="telegram-watchdog")

    async def stop(self) -> None:
        """Stop, then confirm the updates already handed on so they do not come again."""
        for task in (self._watch_task, self._task):
            if task is not None:
                task.cancel()  # a parked long poll cancels cleanly; a leak dies with the client
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        if self._offset is not None and self._fatal is None:
            with contextlib.suppress(TelegramError):
                await self._bot.get_updates_raw(self._offset, 0, ALLOWED_UPDATES, read_timeout=2)

    async def health(self) -> str | None:
        """None while polling works; otherwise what is wrong."""
        if self._fatal is not None:
            return self._fatal
        silent = time.monotonic() - self.last_success
        if silent > self._watchdog:
            return f"telegram: no updates received for {silent:.0f} s"
        return None

    async def _poll_forever(self) -> None:
        failures = 0
        while True:
            try:
                updates, last = await self._get_updates()
            except RetryAfter as exc:
                await self._pause(seconds(exc.retry_after))
                continue
            except InvalidToken:
                self._fatal = "telegram: the bot token was rejected; polling stopped"
                log.error("%s", self._fatal)
                return
            except TelegramError as exc:
                failures += 1
                await self._after_failure(exc.message, failures, exc)
                continue
            if failures:
                log.info("telegram: getUpdates works again after %d failure(s)", failures)
                failures = 0
                if self._on_recovered is not None:
                    self._on_recovered()
            self.last_success = time.monotonic()
            if updates:
                try:
                    await self._sink(updates)
                except LancelotError as exc:  # not kept, so not confirmed: they come again
                    failures += 1
                    await self._after_failure(f"updates not kept: {exc}", failures, None)
                    continue
            if last is not None:  # kept, or unreadable: confirmed by the next getUpdates
                self._offset = last + 1

    async def _get_updates(self) -> tuple[list[Received], int | None]:
        """The waiting updates, each read by itself: an update PTB cannot read (a newer Bot
        API's shape, a malformed one) is logged by its id and skipped, so it can never hold
        up every message after it. Also the last update_id seen."""
        self._in_request_since = time.monotonic()
        try:
            raw = await self._bot.get_updates_raw(
                self._offset, self._timeout, ALLOWED_UPDATES, read_timeout=self._read_timeout
            )
        finally:
            self._in_request_since = None
        self._pool_exhausted = False
        if not isinstance(raw, list):  # not Telegram's answer: retried after a pause, not at once
            raise TelegramError(f"getUpdates answered a {type(raw).__name__}, not a list")
        readable: list[Received] = []
        last: int | None = None
        for item in raw:
            update_id = item.get("update_id") if isinstance(item, dict) else None
            if not isinstance(update_id, int):  # nothing to confirm it by: not one to read
                log.warning("telegram: skipped an update without an update_id")
                continue
            last = update_id if last is None else max(last, update_id)
            try:
                update = Update.de_json(item, self._bot)
            except Exception as exc:  # any shape PTB rejects is skipped
                log.warning(
                    "telegram: skipped update %s, unreadable: %s", update_id, type(exc).__name__
                )
                continue
            readable.append(Received(update, item))
        return readable, last

    async def _after_failure(self, problem: str, failures: int, exc: TelegramError | None) -> None:
        level = logging.WARNING if failures == 1 else logging.DEBUG
        log.log(level, "telegram: getUpdates failed (%s); retrying", problem)
        self._pool_exhausted = POOL_EXHAUSTED in problem.lower()
        if isinstance(exc, Conflict) and "webhook" in problem.lower():
            # A webhook is still set (switching from webhook mode): polling needs it gone.
            with contextlib.suppress(TelegramError):
                await self._bot.delete_webhook()
        await self._pause(self._backoff.delay(failures - 1))

    async def _pause(self, delay: float) -> None:
        """Sleep `delay`, unless the watchdog kicks first."""
        self._kick.clear()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(delay):
                await self._kick.wait()

    async def _watch_forever(self) -> None:
        while True:
            await asyncio.sleep(self._watchdog / 4)
            silent = time.monotonic() - max(self.last_success, self._restarted_at)
            if silent > self._watchdog:
                log.warning("telegram: no successful getUpdates for %.0f s; restarting", silent)
                await self._restart()

    async def _restart(self) -> None:
        self.restarts += 1
        self._restarted_at = time.monotonic()
        since = self._in_request_since
        wedged = since is not None and time.monotonic() - since > self._request_limit
        if wedged or self._pool_exhausted:
            log.warning("telegram: replacing the getUpdates HTTP client")
            await self._request.shutdown()  # a request still in flight fails now
            await self._request.initialize()
            self._pool_exhausted = False
        if self._task is None or self._task.done():
            self._task = self._supervisor.spawn(self._poll_forever(), name="telegram-poller")
        else:
            self._kick.set()
