"""A fake Telegram Bot API server for tests; the real python-telegram-bot talks to it."""

from .server import DEFAULT_TOKEN, DEFAULT_USER_ID, REGISTERED_SECRET, FakeTelegram
from .state import AnsweredCallback, Call, ChatAction, SentDocument, SentMessage

__all__ = [
    "DEFAULT_TOKEN",
    "DEFAULT_USER_ID",
    "REGISTERED_SECRET",
    "AnsweredCallback",
    "Call",
    "ChatAction",
    "FakeTelegram",
    "SentDocument",
    "SentMessage",
]
