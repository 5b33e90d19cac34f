"""The orchestrator: every inbound event goes down the message chain or the press path,
each in its own task; what they answer is recorded and sent."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

from core.bus import Bus
from core.dispatch.chain import Chain, Turn, reply
from core.dispatch.commands import crash_text, crash_words
from core.dispatch.links import sender_meta
from core.dispatch.presses import Presses
from core.errors import DeliveryDeferred, DeliveryFailed
from core.events import ButtonPress, Card, Inbound
from core.receipts.base import ReceiptStore
from core.receipts.model import Receipt, ReceiptStatus
from core.runtime.tasks import Supervisor

log = logging.getLogger(__name__)

MAX_CONCURRENT = 64


class Orchestrator:
    """Consumes the bus and turns each event into receipts and cards."""

    def __init__(
        self,
        bus: Bus,
        ledger: ReceiptStore,
        messages: Chain,
        presses: Presses,
        *,
        tasks: Supervisor | None = None,
    ) -> None:
        """`messages`: the chain a message passes (`core/dispatch/links.py`); `presses`:
        the path of a button press."""
        self._bus = bus
        self._supervisor = tasks or Supervisor()
        self._ledger = ledger
        self._messages = messages
        self._presses = presses
        self._slots = asyncio.Semaphore(MAX_CONCURRENT)
        self._tasks: set[asyncio.Task[None]] = set()

    async def run(self) -> None:
        """Handle events until cancelled; each runs in its own task so a slow one blocks none."""
        try:
            while True:
                event = await self._bus.next_event()
                await self._slots.acquire()
                handling = self._guarded(event)
                task = self._supervisor.spawn(handling, name="orchestrator-event", report=False)
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
        finally:
            for task in list(self._tasks):
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _guarded(self, event: Inbound | ButtonPress) -> None:
        try:
            await self._handle_safely(event)
            await self._bus.finished(event)  # not when cancelled: then it comes again
        finally:
            self._slots.release()
            self._bus.handled()

    async def _handle_safely(self, event: Inbound | ButtonPress) -> None:
        try:
            if isinstance(event, Inbound):
                await self.handle_inbound(event)
            else:
                await self.handle_press(event)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("failed to handle %s from %s", type(event).__name__, event.channel)
            failure = self._record_crash(event, exc)
            await self._answer(event, reply(*crash_words("That", failure)))

    async def handle_inbound(self, event: Inbound) -> None:
        """A message down the chain; its answer recorded under its inbound receipt, and sent."""
        turn, card = await self._messages.run(Turn(event, event.text, started=time.perf_counter()))
        if card is None:
            return
        if turn.recorded:
            card = turn.annotate(card)
            self._record_reply(turn, card)
        await self._answer(event, card)

    def _record_reply(self, turn: Turn, card: Card) -> None:
        self._ledger.append(
            Receipt(
                action_type="reply",
                action_name=card.kind,
                outputs={"title": card.title, "body": card.body[:2000]},
                parent_id=turn.receipt_id,
                quest_id=turn.receipt_id,
                duration_ms=(time.perf_counter() - turn.started) * 1000,
                metadata=sender_meta(turn.event),
            )
        )

    async def handle_press(self, event: ButtonPress) -> None:
        """A press down its path; a card for the presser (a refusal) sent back."""
        card = await self._presses.handle(event)
        if card is not None:
            await self._answer(event, card)

    def _record_crash(self, event: Inbound | ButtonPress, exc: Exception) -> str:
        """A failure receipt for an event whose handling crashed; its id."""
        failure = Receipt(
            action_type="handler_failed",
            action_name="message" if isinstance(event, Inbound) else "button",
            status=ReceiptStatus.FAILURE,
            error_message=crash_text(exc),
            metadata={"channel": event.channel, "sender_id": event.sender_id},
        )
        self._ledger.append(failure)
        return failure.id

    async def _answer(self, event: Inbound | ButtonPress, card: Card) -> None:
        # An update handled again after a crash gets the reply already queued, not a second.
        key = None if event.arrival is None else f"answer:{event.channel}:{event.arrival}"
        try:
            await self._bus.send(event.channel, event.chat_id, card, key=key, answers=event)
        except DeliveryDeferred as exc:  # queued durably: it goes out when it can
            log.info("reply to %s queued: %s", event.channel, exc)
        except DeliveryFailed as exc:
            log.warning("reply to %s failed: %s", event.channel, exc)
