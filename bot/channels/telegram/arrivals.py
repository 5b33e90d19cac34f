"""The Telegram side of the update inbox: an update is kept in state.db before Telegram is
told it arrived (the next getUpdates offset, or the webhook's 200), and handed on once.

At start, the updates a crash or a stop left unhandled are handed on again, before any new
one is received.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, NamedTuple

from telegram import Bot, Update

from bot.channels.telegram import NAME
from core.delivery.inbox import Kept, UpdateInbox

log = logging.getLogger(__name__)

HandOn = Callable[[Update], Awaitable[None]]


class Received(NamedTuple):
    """An update, and the JSON object Telegram sent for it (what the inbox keeps)."""

    update: Update
    data: Mapping[str, Any]


class Arrivals:
    """Keeps updates, hands on the new ones, and marks done those nothing will handle."""

    def __init__(self, inbox: UpdateInbox, bot: Bot, hand_on: HandOn) -> None:
        self._inbox = inbox
        self._bot = bot
        self._hand_on = hand_on

    async def take(self, batch: Sequence[Received]) -> None:
        """Keep a batch in one write, then hand on each update not kept before. Raises
        StorageError when they could not be kept: then they must not be confirmed."""
        kept = [(update.update_id, _payload(data)) for update, data in batch]
        fresh = await self._inbox.accept(NAME, kept)
        for update, _ in batch:
            if update.update_id in fresh:
                await self._hand_on(update)

    async def take_one(self, received: Received) -> None:
        """A webhook's update (as `take`)."""
        await self.take((received,))

    async def settle(self, update: Update) -> None:
        """Nothing further will handle this update (a stranger's, an ignored kind)."""
        await self._inbox.done(NAME, update.update_id)

    async def replay(self) -> tuple[Kept, ...]:
        """Hand on again what was kept but not handled; returns the updates set aside."""
        unfinished = await self._inbox.unfinished(NAME)
        for kept in unfinished.replay:
            update = self._parse(kept)
            if update is None:
                await self._inbox.done(NAME, kept.update_id)
                continue
            await self._hand_on(update)
        if unfinished.replay:
            log.info(
                "telegram: handling %d update(s) kept before the restart", len(unfinished.replay)
            )
        return unfinished.abandoned

    def _parse(self, kept: Kept) -> Update | None:
        try:
            return Update.de_json(json.loads(kept.payload), self._bot)
        except Exception:  # PTB raises whatever a damaged payload provokes
            log.warning("telegram: a kept update (%d) could not be read; dropped", kept.update_id)
            return None


def _payload(data: Mapping[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))
