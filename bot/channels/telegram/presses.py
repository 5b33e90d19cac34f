"""Answering callback queries: every tap gets an answer, so no button spins forever.

The orchestrator decides whether a press counts and says so through the bus
(`answer_press`); a toast carries its note. Should no verdict come (a crash, a slow action),
the query is answered plainly after `fallback_after` seconds, before Telegram gives up on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from telegram import Bot
from telegram.error import TelegramError

from core.runtime.tasks import Supervisor

log = logging.getLogger(__name__)

TOAST_LIMIT = 200  # characters Telegram shows in a callback answer


class PressAnswers:
    """Open callback queries and their answers."""

    def __init__(
        self, bot: Bot, fallback_after: float = 10.0, *, tasks: Supervisor | None = None
    ) -> None:
        self._bot = bot
        self._supervisor = tasks or Supervisor()
        self._fallback_after = fallback_after
        self._open: dict[str, asyncio.TimerHandle] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    def opened(self, query_id: str) -> None:
        """A press went to the bus; answer it plainly if no verdict comes in time."""
        loop = asyncio.get_running_loop()
        self._open[query_id] = loop.call_later(self._fallback_after, self.answer, query_id, "")

    def answer(self, query_id: str, note: str = "") -> None:
        """Answer an open press once (later calls do nothing); runs in the background."""
        timer = self._open.pop(query_id, None)
        if timer is None:
            return
        timer.cancel()
        self._spawn(query_id, note)

    def refuse(self, query_id: str, note: str) -> None:
        """Answer a press that never reaches the bus (a stranger's)."""
        self._spawn(query_id, note)

    def _spawn(self, query_id: str, note: str) -> None:
        answer = self._send(query_id, note[:TOAST_LIMIT])
        task = self._supervisor.spawn(answer, name="tg-answer", report=False)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _send(self, query_id: str, note: str) -> None:
        try:
            await self._bot.answer_callback_query(query_id, text=note or None)
        except TelegramError as exc:
            log.info("could not answer a button press: %s", exc.message)

    async def close(self) -> None:
        """Answer what is still open, then wait for the answers in flight."""
        for query_id in list(self._open):
            self.answer(query_id, "")
        if self._tasks:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(5):
                    await asyncio.gather(*self._tasks, return_exceptions=True)
