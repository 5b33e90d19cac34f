"""Google Chat interaction events, in either format, read into one frozen shape.

The classic Chat API format names the event in `type` (MESSAGE, ADDED_TO_SPACE,
REMOVED_FROM_SPACE, CARD_CLICKED); the Google Workspace add-on format has no `type` but a
`commonEventObject` and one `chat.*Payload`. Only the fields Lancelot reads are modelled.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from core.events import FileKind, FileOffer


class EventFormat(StrEnum):
    """Which of Google's two event formats a request used (its answer must use the same)."""

    CLASSIC = "classic"
    ADDON = "addon"


class EventKind(StrEnum):
    """What happened, whatever the format."""

    MESSAGE = "message"
    ADDED = "added"
    REMOVED = "removed"
    CLICK = "click"
    OTHER = "other"


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)


class _User(_Model):
    name: str = ""
    email: str = ""
    type: str = "HUMAN"


class _Named(_Model):
    name: str = ""


class _DataRef(_Model):
    resourceName: str = ""


class _Attachment(_Model):
    """A file on a message: uploaded to Chat (attachmentDataRef) or a Drive file."""

    name: str = ""
    contentName: str = ""
    contentType: str = ""
    attachmentDataRef: _DataRef | None = None


class _Message(_Model):
    name: str = ""
    text: str = ""
    attachment: list[_Attachment] = []
    argumentText: str | None = None
    slashCommand: dict[str, Any] | None = None
    thread: _Named | None = None
    space: _Named | None = None


class _Parameter(_Model):
    key: str
    value: str = ""


class _Action(_Model):
    actionMethodName: str = ""
    parameters: list[_Parameter] = []


class _Common(_Model):
    invokedFunction: str = ""
    parameters: dict[str, str] = {}


class _ClassicEvent(_Model):
    type: str
    user: _User = _User()
    space: _Named = _Named()
    message: _Message | None = None
    action: _Action | None = None
    common: _Common | None = None


class _Payload(_Model):
    space: _Named | None = None
    message: _Message | None = None


class _Chat(_Model):
    user: _User = _User()
    messagePayload: _Payload | None = None
    addedToSpacePayload: _Payload | None = None
    removedFromSpacePayload: _Payload | None = None
    buttonClickedPayload: _Payload | None = None
    appCommandPayload: _Payload | None = None


class _AddonEvent(_Model):
    commonEventObject: _Common = _Common()
    chat: _Chat


_CLASSIC_KINDS = {
    "MESSAGE": EventKind.MESSAGE,
    "ADDED_TO_SPACE": EventKind.ADDED,
    "REMOVED_FROM_SPACE": EventKind.REMOVED,
    "CARD_CLICKED": EventKind.CLICK,
}


@dataclass(frozen=True, slots=True)
class ChatEvent:
    """One interaction: who, where, what they typed or which button parameters they sent."""

    format: EventFormat
    kind: EventKind
    space: str
    user_email: str
    user_is_human: bool
    text: str = ""
    message_name: str = ""
    thread_name: str = ""
    parameters: dict[str, str] = field(default_factory=dict)
    files: tuple[FileOffer, ...] = ()  # attachments, as Chat announced them


class MalformedEvent(ValueError):
    """The body is not an interaction event Lancelot can read."""


def parse_event(data: object) -> ChatEvent:
    """Read a decoded JSON body; raises MalformedEvent."""
    if not isinstance(data, dict):
        raise MalformedEvent("not a JSON object")
    try:
        if "type" in data:
            return _classic(_ClassicEvent.model_validate(data))
        if "chat" in data:
            return _addon(_AddonEvent.model_validate(data))
    except ValidationError as exc:
        raise MalformedEvent(f"{exc.error_count()} invalid field(s)") from None
    raise MalformedEvent("neither a Chat event nor an add-on event")


def _text_of(message: _Message | None) -> str:
    """What the owner typed, without the @mention (argumentText), except for a slash command,
    whose argumentText lacks the command itself."""
    if message is None:
        return ""
    if message.slashCommand is None and message.argumentText is not None:
        return message.argumentText.strip()
    return message.text.strip()


def _files_of(message: _Message | None) -> tuple[FileOffer, ...]:
    """A message's attachments as file offers (ref: the media resource name; none for a
    Drive file); Chat announces no size."""
    if message is None:
        return ()
    return tuple(
        FileOffer(
            _kind(a.contentType),
            a.attachmentDataRef.resourceName if a.attachmentDataRef else "",  # "": Drive
            a.contentName,
            a.contentType,
        )
        for a in message.attachment
    )


def _kind(content_type: str) -> FileKind:
    major = content_type.split("/", 1)[0]
    if major == "image":
        return FileKind.PHOTO
    if major == "audio":
        return FileKind.AUDIO
    if major == "video":
        return FileKind.VIDEO
    return FileKind.DOCUMENT


def _classic(event: _ClassicEvent) -> ChatEvent:
    message = event.message
    parameters: dict[str, str] = {}
    if event.action is not None:
        parameters = {p.key: p.value for p in event.action.parameters}
    elif event.common is not None:
        parameters = dict(event.common.parameters)
    space = event.space.name or (message.space.name if message and message.space else "")
    return ChatEvent(
        format=EventFormat.CLASSIC,
        kind=_CLASSIC_KINDS.get(event.type, EventKind.OTHER),
        space=space,
        user_email=event.user.email.strip().lower(),
        user_is_human=event.user.type != "BOT",
        text=_text_of(message),
        message_name=message.name if message else "",
        thread_name=message.thread.name if message and message.thread else "",
        parameters=parameters,
        files=_files_of(message),
    )


def _addon(event: _AddonEvent) -> ChatEvent:
    chat = event.chat
    kinds = (
        (chat.messagePayload, EventKind.MESSAGE),
        (chat.appCommandPayload, EventKind.MESSAGE),
        (chat.addedToSpacePayload, EventKind.ADDED),
        (chat.removedFromSpacePayload, EventKind.REMOVED),
        (chat.buttonClickedPayload, EventKind.CLICK),
    )
    payload, kind = next(((p, k) for p, k in kinds if p is not None), (_Payload(), EventKind.OTHER))
    message = payload.message
    space = payload.space.name if payload.space else ""
    if not space and message is not None and message.space is not None:
        space = message.space.name
    return ChatEvent(
        format=EventFormat.ADDON,
        kind=kind,
        space=space,
        user_email=chat.user.email.strip().lower(),
        user_is_human=chat.user.type != "BOT",
        text=_text_of(message),
        message_name=message.name if message else "",
        thread_name=message.thread.name if message and message.thread else "",
        parameters=dict(event.commonEventObject.parameters),
        files=_files_of(message),
    )
