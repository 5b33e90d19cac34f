"""Synchronous answers to an event, in the event's own format.

Classic Chat events are answered with a Message (`actionResponse.type` NEW_MESSAGE or
UPDATE_MESSAGE); add-on events with the message wrapped in
`hostAppDataAction.chatDataAction.createMessageAction` or `updateMessageAction`.
An empty object means "nothing to say now".
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from bot.channels.gchat.events import EventFormat
from bot.channels.gchat.render import Message


class ReplyKind(StrEnum):
    """Post a new message, or replace the one whose button was clicked."""

    NEW = "NEW_MESSAGE"
    UPDATE = "UPDATE_MESSAGE"


@dataclass(frozen=True, slots=True)
class Reply:
    """A message to put in the HTTP response."""

    kind: ReplyKind
    message: Message


def answer(fmt: EventFormat, reply: Reply | None) -> dict[str, Any]:
    """The JSON body for the response to an event of format `fmt`."""
    if reply is None:
        return {}
    if fmt is EventFormat.CLASSIC:
        return {**reply.message, "actionResponse": {"type": reply.kind.value}}
    action = "createMessageAction" if reply.kind is ReplyKind.NEW else "updateMessageAction"
    return {"hostAppDataAction": {"chatDataAction": {action: {"message": reply.message}}}}
