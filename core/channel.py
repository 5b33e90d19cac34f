"""The Channel interface: how the core reaches the owner on a platform."""

from __future__ import annotations

from typing import Protocol

from core.events import Card, MessageRef


class Channel(Protocol):
    """A platform the owner talks through. Implementations live in bot/ (console, telegram,
    gchat); they turn platform updates into bus events and render cards natively."""

    name: str

    @property
    def owner_chat_ids(self) -> tuple[str, ...]:
        """Where unprompted cards (alerts, digests) go on this channel."""
        ...

    async def deliver(self, chat_id: str, card: Card) -> MessageRef:
        """Show a card; return the platform's message reference. Raise DeliveryFailed if not."""
        ...

    async def edit(self, ref: MessageRef, card: Card) -> None:
        """Replace a delivered card's content and buttons."""
        ...

    async def typing(self, chat_id: str) -> None:
        """Show that Lancelot is working (a no-op where the platform has no such thing)."""
        ...
