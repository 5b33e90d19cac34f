"""A fake Google (certificates, token endpoint, Chat REST API, incoming webhook) and a Chat user."""

from .cards import buttons, texts
from .keys import SigningKey, chat_claims, id_token_claims
from .server import FakeGoogle, Fault, StoredMessage
from .user import Answer, ChatUser

__all__ = [
    "Answer",
    "ChatUser",
    "FakeGoogle",
    "Fault",
    "SigningKey",
    "StoredMessage",
    "buttons",
    "chat_claims",
    "id_token_claims",
    "texts",
]
