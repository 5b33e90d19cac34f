"""The Channel interface: how the core reaches the owner on a platform."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Protocol, TypeGuard, runtime_checkable

from core.events import ButtonPress, Card, FileOffer, MessageRef


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


@runtime_checkable
class PartedChannel(Protocol):
    """A channel whose platform caps message length: a long card goes out as several messages.

    The outbox delivers each part on its own and records its message id, so an outage or a
    restart in the middle of a long card resumes at the first part not yet delivered.
    The split must be deterministic (the same card always gives the same parts).
    """

    def parts(self, card: Card) -> int:
        """How many messages this card takes (at least 1)."""
        ...

    async def deliver_part(self, chat_id: str, card: Card, part: int) -> MessageRef:
        """Send part `part` (0-based) of the card; the last part carries the buttons."""
        ...


@runtime_checkable
class PressAnswering(Protocol):
    """A channel whose platform waits for an answer to every button press (Telegram's
    callback queries keep spinning until answered)."""

    async def answer_press(self, press: ButtonPress, *, accepted: bool, note: str = "") -> None:
        """Say how the press went; `note` is a short text the platform may show (a toast)."""
        ...


@runtime_checkable
class FileFetching(Protocol):
    """A channel that can fetch the files the owner sends (Telegram's getFile)."""

    def fetch_file(self, offer: FileOffer) -> AsyncIterator[bytes]:
        """The file's bytes, in chunks, as they arrive (never all in memory at once).

        Raises DeliveryFailed (transient) or DeliveryRejected (the platform refuses it).
        """
        ...


@runtime_checkable
class FileSending(Protocol):
    """A channel that can send the owner a file from this machine."""

    async def send_file(
        self, chat_id: str, path: Path, caption: str, *, as_photo: bool = False
    ) -> MessageRef:
        """Send `path` (a document, or a photo when `as_photo`); the platform's message."""
        ...


@runtime_checkable
class GroupChats(Protocol):
    """A channel whose platform paces group chats apart from private ones (Telegram: 20
    messages a minute to one group; a private chat is not paced ahead of time)."""

    def is_group(self, chat_id: str) -> bool:
        """Whether this chat is a group (several people), not a private chat."""
        ...


def is_group(channel: Channel, chat_id: str) -> bool:
    """Whether `chat_id` is a group chat on `channel` (False where it cannot tell)."""
    return _groups(channel) and channel.is_group(chat_id)


def parted(channel: object) -> TypeGuard[PartedChannel]:
    """isinstance(channel, PartedChannel), decided once per class (see `_has`)."""
    return _has(type(channel), PartedChannel)


def answers_presses(channel: object) -> TypeGuard[PressAnswering]:
    """isinstance(channel, PressAnswering), decided once per class (see `_has`)."""
    return _has(type(channel), PressAnswering)


def _groups(channel: object) -> TypeGuard[GroupChats]:
    return _has(type(channel), GroupChats)


_KNOWN: dict[tuple[type, type], bool] = {}


def _has(cls: type, capability: type) -> bool:
    """Whether a channel class has every method of `capability`. isinstance against a
    runtime-checkable Protocol walks its members on every call, and the outbox asks a few
    times per message; a channel's methods are its class's, so one answer per class holds."""
    known = _KNOWN.get((cls, capability))
    if known is None:
        known = _KNOWN[cls, capability] = issubclass(cls, capability)
    return known
