"""Events waiting for their synchronous answer, so a card for that space can ride on it.

Google Chat lets an app answer an event in the HTTP response itself: a new message for a
message event, or the clicked card replaced in place for a click. An exchange stays open for
a few seconds; a card delivered to its space (or an edit of the clicked card) meanwhile
becomes its answer, and whatever comes later is pushed.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from bot.channels.gchat.replies import Reply


@dataclass(eq=False)
class Exchange:
    """One open event. For a click: the card whose button was tapped, and its message."""

    space: str
    card_id: str = ""
    message_name: str = ""
    answer: asyncio.Future[Reply | None] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )

    @property
    def open(self) -> bool:
        """Still waiting for its answer."""
        return not self.answer.done()

    def settle(self, reply: Reply) -> bool:
        """Make `reply` the answer, if none was given yet."""
        if self.answer.done():
            return False
        self.answer.set_result(reply)
        return True


class Exchanges:
    """The open exchanges, oldest first."""

    def __init__(self) -> None:
        self._open: list[Exchange] = []

    def start(self, space: str, *, card_id: str = "", message_name: str = "") -> Exchange:
        """Open an exchange for an event in `space`."""
        exchange = Exchange(space, card_id, message_name)
        self._open.append(exchange)
        return exchange

    async def wait(self, exchange: Exchange, seconds: float) -> Reply | None:
        """The exchange's answer, or None after `seconds`; it is closed either way."""
        try:
            async with asyncio.timeout(seconds):
                return await asyncio.shield(exchange.answer)
        except TimeoutError:
            return None
        finally:
            self.close(exchange)

    def close(self, exchange: Exchange) -> None:
        """Stop offering the exchange (an answer arriving later is pushed instead)."""
        if exchange in self._open:
            self._open.remove(exchange)
        if not exchange.answer.done():
            exchange.answer.set_result(None)

    def for_new_message(self, space: str) -> Exchange | None:
        """The oldest open exchange in `space` that a new message may answer."""
        return next((e for e in self._open if e.space == space and e.open), None)

    def for_edit(self, space: str, message_id: str, card_id: str) -> Exchange | None:
        """The open click on this card's message (or on a card answered synchronously, whose
        message name Lancelot never learnt)."""
        for exchange in self._open:
            if exchange.space != space or exchange.card_id != card_id or not exchange.open:
                continue
            if message_id == exchange.message_name or message_id.startswith("sync:"):
                return exchange
        return None

    def close_all(self) -> None:
        """Shutting down: every waiting event is answered with nothing."""
        for exchange in list(self._open):
            self.close(exchange)
