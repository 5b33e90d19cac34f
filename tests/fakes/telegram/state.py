"""What the fake Telegram remembers: chats, their messages, and what the bot did."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple, TypedDict

from . import objects
from .errors import bad_request
from .files import FileStore
from .updates import UpdateQueue


class SentDocument(TypedDict):
    """A document the bot sent; content is None when it was sent by file_id or URL."""

    file_id: str
    file_name: str | None
    mime_type: str | None
    content: bytes | None


class SentMessage(TypedDict):
    """A message the bot sent, as the phone now shows it (edits applied in place)."""

    chat_id: int
    message_id: int
    text: str  # exactly as the bot sent it, markup included (a document's caption)
    parse_mode: str | None
    plain_text: str  # what the phone shows: markup applied, whitespace trimmed
    entities: list[dict[str, Any]]
    reply_markup: dict[str, Any] | None
    document: SentDocument | None
    photo: SentDocument | None  # sendPhoto's upload
    edits: int
    deleted: bool


class AnsweredCallback(TypedDict):
    """An answerCallbackQuery the bot made."""

    callback_query_id: str
    text: str | None
    show_alert: bool
    url: str | None


class Call(NamedTuple):
    """One Bot API request the bot made, and the HTTP status it got."""

    method: str
    params: dict[str, Any]
    status: int
    at: float = 0.0  # when it was answered (time.monotonic), to check edit rates


class ChatAction(NamedTuple):
    """One sendChatAction ("typing", "upload_document", ...)."""

    chat_id: int
    action: str


class Signal:
    """Wakes every waiter when the state changes; waiters re-check their own condition."""

    def __init__(self) -> None:
        self._event = asyncio.Event()

    def notify(self) -> None:
        self._event.set()
        self._event = asyncio.Event()

    async def wait_until(self, predicate: Callable[[], bool], within: float | None) -> None:
        """Return once predicate() holds; raise TimeoutError after `within` seconds."""
        async with asyncio.timeout(within):
            while not predicate():
                await self._event.wait()


@dataclass
class StoredMessage:
    """A message in a chat: the Bot API Message object, plus the record if the bot sent it."""

    payload: dict[str, Any]
    record: SentMessage | None = None


class Chats:
    """Chats the bot can see; message ids grow per chat, shared by both sides as in Telegram."""

    def __init__(self) -> None:
        self._chats: dict[int, dict[str, Any]] = {}
        self._last_id: dict[int, int] = {}
        self._messages: dict[tuple[int, int], StoredMessage] = {}

    def chat(self, chat_id: int, person: dict[str, Any] | None = None) -> dict[str, Any]:
        """The Chat object; meeting the person behind a private chat fills in their name."""
        chat = self._chats.setdefault(chat_id, objects.chat_for(chat_id))
        if person is not None:
            chat.clear()  # in place: stored messages share this object, as one chat
            chat.update(objects.chat_for(chat_id, person))
        return chat

    def resolve(self, raw: Any) -> int:
        """The chat id of a chat_id parameter; unknown @usernames are not found."""
        if isinstance(raw, bool) or not isinstance(raw, int):
            raise bad_request("chat not found" if raw not in (None, "") else "chat_id is empty")
        self.chat(raw)
        return raw

    def add(self, chat_id: int, sender: dict[str, Any], content: dict[str, Any]) -> StoredMessage:
        message_id = self._last_id.get(chat_id, 0) + 1
        self._last_id[chat_id] = message_id
        payload = {
            "message_id": message_id,
            "from": sender,
            "chat": self.chat(chat_id),
            "date": int(time.time()),
            **content,
        }
        stored = StoredMessage(payload)
        self._messages[(chat_id, message_id)] = stored
        return stored

    def find(self, chat_id: int, message_id: int | None) -> StoredMessage | None:
        return self._messages.get((chat_id, message_id or 0))

    def remove(self, chat_id: int, message_id: int) -> None:
        del self._messages[(chat_id, message_id)]


@dataclass
class TelegramState:
    """Everything one fake bot account holds."""

    me: dict[str, Any]
    signal: Signal = field(default_factory=Signal)
    chats: Chats = field(default_factory=Chats)
    updates: UpdateQueue = field(init=False)
    sent: list[SentMessage] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    answered_callbacks: list[AnsweredCallback] = field(default_factory=list)
    open_callbacks: dict[str, dict[str, Any]] = field(default_factory=dict)
    commands: dict[tuple[str, str], list[dict[str, str]]] = field(default_factory=dict)
    chat_actions: list[ChatAction] = field(default_factory=list)
    files: dict[str, SentDocument] = field(default_factory=dict)
    uploads: FileStore = field(default_factory=FileStore)  # files users sent
    ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    interrupted: Callable[[], bool] = lambda: False

    def __post_init__(self) -> None:
        self.updates = UpdateQueue(self.signal, lambda: self.interrupted())

    def bot_message(self, chat_id: int, content: dict[str, Any]) -> StoredMessage:
        """Store a message from the bot; the caller fills in its record."""
        return self.chats.add(chat_id, self.me, content)
