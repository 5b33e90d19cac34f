"""A real in-memory Channel: records what it was asked to show, like a phone would."""

from __future__ import annotations

import asyncio
import itertools

from core.events import Card, CardKind, MessageRef


class MemoryChannel:
    """Holds delivered cards (and their edits) in order; `next_card()` waits for one.

    A running task's progress message (CardKind.PROGRESS) is kept apart, in `progress` and
    `progress_edits`: a test reading the replies sees the replies, as an owner would.
    """

    def __init__(self, name: str = "memory", owner_chat: str = "owner-chat") -> None:
        self.name = name
        self._owner_chat = owner_chat
        self._ids = itertools.count(1)
        self.delivered: list[tuple[MessageRef, Card]] = []
        self.edits: list[tuple[MessageRef, Card]] = []
        self.progress: list[tuple[MessageRef, Card]] = []
        self.progress_edits: list[tuple[MessageRef, Card]] = []
        self.typing_count = 0
        self._arrivals: asyncio.Queue[tuple[MessageRef, Card]] = asyncio.Queue()

    @property
    def owner_chat_ids(self) -> tuple[str, ...]:
        return (self._owner_chat,)

    async def deliver(self, chat_id: str, card: Card) -> MessageRef:
        ref = MessageRef(self.name, chat_id, str(next(self._ids)))
        if card.kind is CardKind.PROGRESS:
            self.progress.append((ref, card))
            return ref
        self.delivered.append((ref, card))
        self._arrivals.put_nowait((ref, card))
        return ref

    async def edit(self, ref: MessageRef, card: Card) -> None:
        (self.progress_edits if card.kind is CardKind.PROGRESS else self.edits).append((ref, card))

    async def typing(self, chat_id: str) -> None:
        self.typing_count += 1

    async def next_card(self, wait: float = 5.0) -> tuple[MessageRef, Card]:
        """The next delivered card, waiting up to `wait` seconds."""
        return await asyncio.wait_for(self._arrivals.get(), wait)

    def pending(self) -> int:
        return self._arrivals.qsize()
