"""The bus: inbound events from channels to the orchestrator, cards from the core to channels."""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from dataclasses import replace
from typing import TYPE_CHECKING

from core.channel import Channel, answers_presses
from core.errors import DeliveryDeferred, DeliveryFailed, LancelotError
from core.events import ButtonPress, Card, Inbound, MessageRef
from core.receipts.redaction import Redactor

if TYPE_CHECKING:
    from core.delivery.inbox import UpdateInbox
    from core.delivery.outbox import Outbox, Queued
    from core.delivery.writer import Write

log = logging.getLogger(__name__)

InboundEvent = Inbound | ButtonPress

MAX_TRACKED_CARDS = 10_000


class Bus:
    """Carries events both ways and remembers where each card was delivered, so a later
    `update()` edits every copy (on every channel) and a button press can be tied to its card."""

    def __init__(
        self,
        max_queue: int = 1000,
        *,
        inbox: UpdateInbox | None = None,
        redactor: Redactor | None = None,
    ) -> None:
        """`inbox`: where channels keep their updates; an event with an `arrival` is marked
        done there once handled (`finished`). `redactor`: what no card may carry (a key,
        raw or encoded, in a command's output), masked in each card before it goes out."""
        self._queue: asyncio.Queue[InboundEvent] = asyncio.Queue(max_queue)
        self._inbox = inbox
        self._redactor = redactor or Redactor()
        self._channels: dict[str, Channel] = {}
        self._outboxes: dict[str, Outbox] = {}
        self._copies: OrderedDict[str, list[MessageRef]] = OrderedDict()
        self._card_of: dict[MessageRef, str] = {}
        # (channel, arrival) of updates marked done with their answer: `finished` skips them.
        self._marked: set[tuple[str, int]] = set()

    def attach(self, channel: Channel, outbox: Outbox | None = None) -> None:
        """Make a channel reachable by name; with an outbox, its cards are delivered durably
        (queued in state.db, paced, retried) and remembered once they land."""
        self._channels[channel.name] = channel
        if outbox is not None:
            self._outboxes[channel.name] = outbox
            outbox.serve(channel, self.remember)

    @property
    def channels(self) -> tuple[Channel, ...]:
        """Attached channels."""
        return tuple(self._channels.values())

    async def publish(self, event: InboundEvent) -> None:
        """Called by channels for every update that passed their own checks."""
        await self._queue.put(event)

    async def next_event(self) -> InboundEvent:
        """The orchestrator's side of the queue; call `handled()` when done with it."""
        return await self._queue.get()

    def handled(self) -> None:
        """Mark one event from `next_event` as fully handled."""
        self._queue.task_done()

    async def finished(self, event: InboundEvent) -> bool:
        """The event's handling ran to its end (its reply, if any, durably queued): an update
        kept in the inbox is marked done, so a restart does not hand it on again (unless its
        answer's send marked it already). Whether the mark is on disk (or none was needed);
        one that cannot be written is logged, and the update then comes again at the next
        start."""
        if event.arrival is None or self._inbox is None:
            return True
        arrival = (event.channel, event.arrival)
        if arrival in self._marked:
            self._marked.discard(arrival)
            return True
        try:
            await self._inbox.done(event.channel, event.arrival)
        except LancelotError as exc:
            log.warning("could not mark an update from %s handled: %s", event.channel, exc)
            return False
        return True

    async def drained(self) -> None:
        """Wait until every published event has been handled."""
        await self._queue.join()

    async def send(
        self,
        channel: str,
        chat_id: str,
        card: Card,
        *,
        key: str | None = None,
        answers: InboundEvent | None = None,
    ) -> MessageRef:
        """Deliver a card to one chat; remember the copy. Raises DeliveryFailed.

        On a durable channel this waits for the first attempt only: DeliveryDeferred means the
        card is safely queued and will still arrive (and be remembered then). The outbox
        delivers a card id to a chat once; a fresh copy of the same card (a reminder) needs
        its own `key`. `answers`: the event the card answers; on a durable channel its update
        is marked done in the transaction that queues the card (its outcome is durable: a
        restart must not handle it again), and `finished` then has nothing left to write.
        """
        target = self._channels.get(channel)
        if target is None:
            raise DeliveryFailed(f"no channel named {channel!r}")
        card = self._masked(card)
        outbox = self._outboxes.get(channel)
        if outbox is not None:
            mark, queued = self._finishing(answers)
            return await outbox.send(channel, chat_id, card, key=key, alongside=mark, queued=queued)
        try:
            ref = await target.deliver(chat_id, card)
        except DeliveryFailed:
            raise
        except LancelotError as exc:
            raise DeliveryFailed(str(exc)) from exc
        self.remember(card.correlation_id, ref)
        return ref

    def _finishing(self, event: InboundEvent | None) -> tuple[Write | None, Queued | None]:
        """For a card answering `event`: the done mark of its update, to be stored with the
        card, and what follows the card's commit (the mark on its own if it did not ride)."""
        if event is None or event.arrival is None or self._inbox is None:
            return None, None
        answered = event
        arrival = (event.channel, event.arrival)

        async def queued(stored: bool) -> None:
            if stored or await self.finished(answered):
                self._marked.add(arrival)

        return self._inbox.done_mark(event.channel, event.arrival), queued

    def _masked(self, card: Card) -> Card:
        """The card with any secret in its body or fields masked (a chat keeps what it is
        sent for ever, on the platform's servers too)."""
        body = self._redactor.text(card.body)
        fields = tuple((name, self._redactor.text(value)) for name, value in card.fields)
        if body == card.body and fields == card.fields:
            return card
        return replace(card, body=body, fields=fields)

    async def broadcast(self, card: Card, *, key: str | None = None) -> list[MessageRef]:
        """Deliver a card to the owner on every channel; failures are logged, not raised.
        `key` (made unique per chat here) asks for a fresh copy, as in send()."""
        refs: list[MessageRef] = []
        for channel in self._channels.values():
            for chat_id in channel.owner_chat_ids:
                try:
                    copy_key = f"{key}:{channel.name}:{chat_id}" if key else None
                    refs.append(await self.send(channel.name, chat_id, card, key=copy_key))
                except DeliveryFailed as exc:
                    log.warning("could not deliver %s to %s: %s", card.kind, channel.name, exc)
        return refs

    async def update(self, correlation_id: str, card: Card) -> int:
        """Edit every copy of a card; return how many were (or, durably queued, will be)
        edited. Copies still waiting in an outbox go out with the new content instead."""
        card = self._masked(card)
        edited = 0
        for name, outbox in self._outboxes.items():
            edited += await outbox.revise(name, correlation_id, card)
        for ref in list(self._copies.get(correlation_id, ())):
            channel = self._channels.get(ref.channel)
            if channel is None:
                continue
            try:
                await self._edit(channel, ref, card)
                edited += 1
            except DeliveryDeferred:
                edited += 1
            except DeliveryFailed as exc:
                log.warning("could not edit card on %s: %s", ref.channel, exc)
        return edited

    async def _edit(self, channel: Channel, ref: MessageRef, card: Card) -> None:
        outbox = self._outboxes.get(ref.channel)
        if outbox is not None:
            await outbox.edit(ref, card)
            return
        try:
            await channel.edit(ref, card)
        except DeliveryFailed:
            raise
        except LancelotError as exc:
            raise DeliveryFailed(str(exc)) from exc

    def remember(self, correlation_id: str, ref: MessageRef) -> None:
        """Record that a card was delivered as `ref` (bounded memory)."""
        copies = self._copies.setdefault(correlation_id, [])
        if ref not in copies:
            copies.append(ref)
        self._copies.move_to_end(correlation_id)
        self._card_of[ref] = correlation_id
        while len(self._copies) > MAX_TRACKED_CARDS:
            _, old_refs = self._copies.popitem(last=False)
            for old in old_refs:
                self._card_of.pop(old, None)

    def card_of(self, ref: MessageRef | None) -> str | None:
        """Which card a delivered message shows, if known."""
        return self._card_of.get(ref) if ref is not None else None

    async def answer_press(self, press: ButtonPress, *, accepted: bool, note: str = "") -> None:
        """Tell the press's channel how it went (Telegram stops the button's spinner and may
        show `note` as a toast). Best effort: failures are logged."""
        channel = self._channels.get(press.channel)
        if channel is None or not answers_presses(channel):
            return
        try:
            await channel.answer_press(press, accepted=accepted, note=note)
        except LancelotError as exc:
            log.debug("could not answer a press on %s: %s", press.channel, exc)

    async def typing(self, channel: str, chat_id: str) -> None:
        """Best-effort typing indicator."""
        target = self._channels.get(channel)
        if target is not None:
            try:
                await target.typing(chat_id)
            except DeliveryFailed:
                log.debug("typing indicator failed on %s", channel)
