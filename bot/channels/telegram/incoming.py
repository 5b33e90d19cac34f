"""What an owner's Telegram message is, as a bus event: text, files (with what Telegram
announced about them, nothing downloaded yet), or something Lancelot does not take."""

from __future__ import annotations

from telegram import Message, User

from bot.channels.telegram import NAME
from core.events import FileKind, FileOffer, Inbound, MessageRef

EDITED = "an edited message"
# Kinds Lancelot answers without acting on, by the Message field that holds each.
_UNTAKEN = (
    ("sticker", "a sticker"),
    ("venue", "a venue"),
    ("location", "a location"),
    ("contact", "a contact"),
    ("poll", "a poll"),
    ("dice", "a dice roll"),
    ("game", "a game"),
    ("story", "a story"),
    ("invoice", "an invoice"),
)


def inbound(message: Message, user: User, *, edited: bool = False) -> Inbound:
    """The Inbound for one message from the owner (an edit is never run again)."""
    chat_id = str(message.chat.id)
    ref = MessageRef(NAME, chat_id, str(message.message_id))
    if edited:
        return Inbound(NAME, str(user.id), chat_id, "", ref, unhandled=EDITED)
    words = message.text or message.caption or ""
    offer = file_offer(message)
    if offer is not None:
        return Inbound(NAME, str(user.id), chat_id, words, ref, files=(offer,))
    if message.text is not None:
        return Inbound(NAME, str(user.id), chat_id, words, ref)
    return Inbound(NAME, str(user.id), chat_id, "", ref, unhandled=untaken(message))


def file_offer(message: Message) -> FileOffer | None:
    """The file a message carries, as Telegram announced it (the largest size of a photo)."""
    if message.photo:
        best = max(message.photo, key=lambda p: (p.file_size or 0, p.width * p.height))
        return FileOffer(FileKind.PHOTO, best.file_id, "", "image/jpeg", best.file_size)
    if message.voice is not None:
        voice = message.voice
        return FileOffer(
            FileKind.VOICE, voice.file_id, "", voice.mime_type or "audio/ogg", voice.file_size
        )
    if message.video_note is not None:
        note = message.video_note
        return FileOffer(FileKind.VIDEO, note.file_id, "", "video/mp4", note.file_size)
    for kind, media in (
        (FileKind.VIDEO, message.animation),  # a GIF also fills `document`: take it first
        (FileKind.AUDIO, message.audio),
        (FileKind.VIDEO, message.video),
        (FileKind.DOCUMENT, message.document),
    ):
        if media is not None:
            return FileOffer(
                kind, media.file_id, media.file_name or "", media.mime_type or "", media.file_size
            )
    return None


def untaken(message: Message) -> str:
    """What the owner sent, in words, when it is nothing Lancelot takes."""
    for field, words in _UNTAKEN:
        if getattr(message, field, None) is not None:
            return words
    return "that kind of message"
