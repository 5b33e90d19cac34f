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


@dataclass(frozen=True, slots=True)
class MessageRef:
    """Where a message lives on a platform: channel, chat and the platform's message id."""

    channel: str
    chat_id: str
    message_id: str


@dataclass(frozen=True, slots=True)
class Inbound:
    """Text the owner (or a stranger) sent on some channel."""

    channel: str
    sender_id: str
    chat_id: str
    text: str
    message_ref: MessageRef | None = None


@dataclass(frozen=True, slots=True)
class ButtonPress:
    """A tap on a card button, carrying the opaque action token the button held."""

    channel: str
    sender_id: str
    chat_id: str
    message_ref: MessageRef | None
    action_token: str
    press_id: str = ""  # the platform's id for this tap (Telegram's callback query id)


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
