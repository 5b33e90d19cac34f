"""The bus: inbound events from channels to the orchestrator, cards from the core to channels."""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict

from core.channel import Channel
from core.errors import DeliveryFailed
from core.events import ButtonPress, Card, Inbound, MessageRef

log = logging.getLogger(__name__)

InboundEvent = Inbound | ButtonPress

MAX_TRACKED_CARDS = 10_000


class Bus:
    """Carries events both ways and remembers where each card was delivered, so a later
    CardUpdate edits every copy (on every channel) and a button press can be tied to its card."""

    def __init__(self, max_queue: int = 1000) -> None:
        self._queue: asyncio.Queue[InboundEvent] = asyncio.Queue(max_queue)
        self._channels: dict[str, Channel] = {}
        self._copies: OrderedDict[str, list[MessageRef]] = OrderedDict()
        self._card_of: dict[MessageRef, str] = {}

    def attach(self, channel: Channel) -> None:
        """Make a channel reachable by name."""
        self._channels[channel.name] = channel

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

    async def drained(self) -> None:
        """Wait until every published event has been handled."""
        await self._queue.join()

    async def send(self, channel: str, chat_id: str, card: Card) -> MessageRef:
        """Deliver a card to one chat; remember the copy. Raises DeliveryFailed."""
        target = self._channels.get(channel)
        if target is None:
            raise DeliveryFailed(f"no channel named {channel!r}")
        ref = await target.deliver(chat_id, card)
        self.remember(card.correlation_id, ref)
        return ref

    async def broadcast(self, card: Card) -> list[MessageRef]:
        """Deliver a card to the owner on every channel; failures are logged, not raised."""
        refs: list[MessageRef] = []
        for channel in self._channels.values():
            for chat_id in channel.owner_chat_ids:
                try:
                    refs.append(await self.send(channel.name, chat_id, card))
                except DeliveryFailed as exc:
                    log.warning("could not deliver %s to %s: %s", card.kind, channel.name, exc)
        return refs

    async def update(self, correlation_id: str, card: Card) -> int:
        """Edit every delivered copy of a card; return how many were edited."""
        edited = 0
        for ref in list(self._copies.get(correlation_id, ())):
            channel = self._channels.get(ref.channel)
            if channel is None:
                continue
            try:
                await channel.edit(ref, card)
                edited += 1
            except DeliveryFailed as exc:
                log.warning("could not edit card on %s: %s", ref.channel, exc)
        return edited

    def remember(self, correlation_id: str, ref: MessageRef) -> None:
        """Record that a card was delivered as `ref` (bounded memory)."""
        self._copies.setdefault(correlation_id, []).append(ref)
        self._copies.move_to_end(correlation_id)
        self._card_of[ref] = correlation_id
        while len(self._copies) > MAX_TRACKED_CARDS:
            _, old_refs = self._copies.popitem(last=False)
            for old in old_refs:
                self._card_of.pop(old, None)

    def card_of(self, ref: MessageRef | None) -> str | None:
        """Which card a delivered message shows, if known."""
        return self._card_of.get(ref) if ref is not None else None

    async def typing(self, channel: str, chat_id: str) -> None:
        """Best-effort typing indicator."""
        target = self._channels.get(channel)
        if target is not None:
            try:
                await target.typing(chat_id)
            except DeliveryFailed:
                log.debug("typing indicator failed on %s", channel)
