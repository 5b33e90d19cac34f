"""The bus vocabulary: frozen events that channels and the core exchange."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from enum import StrEnum


class CardKind(StrEnum):
    """What a card is for; channels may style each differently."""

    REPLY = "reply"
    APPROVAL = "approval"
    ALERT = "alert"
    DIGEST = "digest"
    RECEIPT = "receipt"
    NOTICE = "notice"
    PROGRESS = "progress"  # a running task's status, edited in place (with Stop)


@dataclass(frozen=True, slots=True)
class MessageRef:
    """Where a message lives on a platform: channel, chat and the platform's message id."""

    channel: str
    chat_id: str
    message_id: str


class FileKind(StrEnum):
    """What sort of file came in (each platform's own kinds mapped onto these)."""

    PHOTO = "photo"
    DOCUMENT = "document"
    AUDIO = "audio"
    VIDEO = "video"
    VOICE = "voice"


@dataclass(frozen=True, slots=True)
class FileOffer:
    """A file the owner sent, not fetched yet: what the platform announced about it.

    `ref` is the platform's handle (Telegram's file_id, a Google Chat attachment's resource
    name); `size` is the announced size in bytes (None when the platform does not say).
    """

    kind: FileKind
    ref: str
    name: str = ""  # the name as sent; photos and voice notes have none
    mime: str = ""
    size: int | None = None


@dataclass(frozen=True, slots=True)
class Attachment:
    """A file of the current turn, saved in the workspace (`path` is workspace-relative)."""

    kind: FileKind
    path: str
    mime: str
    size: int
    sha256: str


@dataclass(frozen=True, slots=True)
class Inbound:
    """Text the owner (or a stranger) sent on some channel.

    `files` are files that came with it (the core fetches them; `attachments` are what it
    saved, for the handler); `unhandled` names what was sent when it is nothing Lancelot
    takes ("a sticker", "an edited message"); `arrival` is set by a channel that keeps its
    updates in the inbox (core/delivery/inbox.py), so the bus can mark it handled.
    """

    channel: str
    sender_id: str
    chat_id: str
    text: str
    message_ref: MessageRef | None = None
    files: tuple[FileOffer, ...] = ()
    attachments: tuple[Attachment, ...] = ()
    unhandled: str = ""
    arrival: int | None = None  # the update's id in its channel's inbox, marked done once handled


@dataclass(frozen=True, slots=True)
class ButtonPress:
    """A tap on a card button, carrying the opaque action token the button held."""

    channel: str
    sender_id: str
    chat_id: str
    message_ref: MessageRef | None
    action_token: str
    press_id: str = ""  # the platform's id for this tap (Telegram's callback query id)
    arrival: int | None = None  # as Inbound.arrival


@dataclass(frozen=True, slots=True)
class Button:
    """A card button: what it says and the opaque signed token it sends back."""

    label: str
    action_token: str = ""
    url: str | None = None


@dataclass(frozen=True, slots=True)
class Card:
    """What the core wants the owner to see."""

    kind: CardKind
    title: str
    body: str = ""
    fields: tuple[tuple[str, str], ...] = ()
    buttons: tuple[Button, ...] = ()
    correlation_id: str = field(default_factory=lambda: uuid.uuid4().hex)
