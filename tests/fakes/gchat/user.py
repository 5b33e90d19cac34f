"""The person in Google Chat: Chat's signed event requests, in either format, to Lancelot's
endpoint, and what Chat then shows (an answer becomes a message; an update replaces a card)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Literal

import aiohttp

from .cards import buttons
from .keys import chat_claims, id_token_claims
from .server import FakeGoogle, StoredMessage

Format = Literal["classic", "addon"]
_ids = itertools.count(1)


@dataclass
class Answer:
    """Lancelot's HTTP answer to one event, and what it did on screen."""

    status: int
    body: dict[str, Any]
    kind: str = ""  # NEW_MESSAGE, UPDATE_MESSAGE or "" (nothing)
    message: dict[str, Any] | None = None
    shown: StoredMessage | None = None


def unwrap(fmt: Format, body: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
    """(kind, message) from an answer in the event's format."""
    if fmt == "classic":
        if not body:
            return "", None
        message = {k: v for k, v in body.items() if k != "actionResponse"}
        return body.get("actionResponse", {}).get("type", "NEW_MESSAGE"), message
    action = body.get("hostAppDataAction", {}).get("chatDataAction", {})
    if "createMessageAction" in action:
        return "NEW_MESSAGE", action["createMessageAction"]["message"]
    if "updateMessageAction" in action:
        return "UPDATE_MESSAGE", action["updateMessageAction"]["message"]
    assert not body, f"an add-on answer Chat would not understand: {body}"
    return "", None


class ChatUser:
    """One person in one space, sending through Google Chat to Lancelot."""

    def __init__(
        self,
        google: FakeGoogle,
        endpoint_url: str,
        audience: str,
        *,
        email: str,
        space: str = "spaces/OWNERDM",
    ) -> None:
        self.google = google
        self.endpoint_url = endpoint_url
        self.audience = audience
        self.email = email
        self.space = space
        self._stale_clicks: dict[tuple[str, str], dict[str, Any]] = {}

    def bearer(self, **overrides: Any) -> str:
        """A token as Chat signs it for this app's audience."""
        if self.audience.startswith("http"):
            return self.google.id_key.sign(id_token_claims(self.audience, **overrides))
        return self.google.chat_key.sign(chat_claims(self.audience, **overrides))

    async def post(
        self, event: dict[str, Any], *, authorization: str | None = None, fmt: Format = "classic"
    ) -> Answer:
        """POST one event; `authorization` replaces the proper header (None: a valid one)."""
        headers = {"Authorization": authorization or f"Bearer {self.bearer()}"}
        async with (
            aiohttp.ClientSession() as session,
            session.post(self.endpoint_url, json=event, headers=headers) as response,
        ):
            body = await response.json(content_type=None) if response.status == 200 else {}
            answer = Answer(response.status, body)
        if response.status == 200:
            answer.kind, answer.message = unwrap(fmt, body)
        return answer

    def _user(self) -> dict[str, Any]:
        return {"name": "users/1", "displayName": "Owner", "email": self.email, "type": "HUMAN"}

    def message_event(self, text: str, fmt: Format = "classic") -> tuple[dict[str, Any], str]:
        """A MESSAGE event for `text` typed in a new thread; returns it and its thread."""
        n = next(_ids)
        thread = f"{self.space}/threads/u{n}"
        message = {
            "name": f"{self.space}/messages/u{n}",
            "text": text,
            "argumentText": text,
            "thread": {"name": thread},
            "space": {"name": self.space},
        }
        space = {"name": self.space, "spaceType": "DIRECT_MESSAGE"}
        if fmt == "classic":
            event = {"type": "MESSAGE", "space": space, "user": self._user(), "message": message}
        else:
            event = {
                "commonEventObject": {"hostApp": "CHAT", "platform": "WEB"},
                "chat": {
                    "user": self._user(),
                    "messagePayload": {"space": space, "message": message},
                },
            }
        return event, thread

    async def say(self, text: str, fmt: Format = "classic") -> Answer:
        """Type `text`; an answer appears in the thread as Chat would show it."""
        event, thread = self.message_event(text, fmt)
        answer = await self.post(event, fmt=fmt)
        if answer.kind == "NEW_MESSAGE" and answer.message is not None:
            answer.shown = await self.google.answered(self.space, thread, answer.message)
        return answer

    def click_event(
        self, shown: StoredMessage, label: str, fmt: Format = "classic"
    ) -> dict[str, Any]:
        """A CARD_CLICKED (or buttonClickedPayload) event for a button on a shown card."""
        button = next(b for b in buttons(shown.body) if b["text"] == label)
        action = button["onClick"]["action"]
        parameters = {p["key"]: p["value"] for p in action.get("parameters", [])}
        message = {"name": shown.name, "thread": {"name": shown.thread}, **shown.body}
        space = {"name": shown.space}
        if fmt == "classic":
            return {
                "type": "CARD_CLICKED",
                "space": space,
                "user": self._user(),
                "message": message,
                "action": {
                    "actionMethodName": action["function"],
                    "parameters": action.get("parameters", []),
                },
                "common": {"invokedFunction": action["function"], "parameters": parameters},
            }
        return {
            "commonEventObject": {
                "hostApp": "CHAT",
                "invokedFunction": action["function"],
                "parameters": parameters,
            },
            "chat": {
                "user": self._user(),
                "buttonClickedPayload": {"space": space, "message": message},
            },
        }

    async def click(self, shown: StoredMessage, label: str, fmt: Format = "classic") -> Answer:
        """Tap a button; an UPDATE_MESSAGE answer replaces the card on screen."""
        event = self.click_event(shown, label, fmt)
        self._stale_clicks[(shown.name, label)] = event
        answer = await self.post(event, fmt=fmt)
        if answer.kind == "UPDATE_MESSAGE" and answer.message is not None:
            await self.google.replaced(shown.name, answer.message)
            answer.shown = shown
        elif answer.kind == "NEW_MESSAGE" and answer.message is not None:
            answer.shown = await self.google.answered(shown.space, shown.thread, answer.message)
        return answer

    async def click_event_post(
        self, shown: StoredMessage, label: str, fmt: Format = "classic"
    ) -> Answer:
        """Tap a button as it was before any update (a double tap on a stale screen)."""
        return await self.post(self._stale_clicks[(shown.name, label)], fmt=fmt)
