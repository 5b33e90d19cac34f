"""A feature's share of dispatch: its commands, its buttons, its words and its text handling.

Each feature builds one `Router` and includes it in the `CommandRegistry` (as aiogram's
routers are included in a dispatcher); nothing is registered twice, so no feature can take
over another's command or button by registering after it.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from core.events import ButtonPress, Card, Inbound

# Telegram's rule for a command (setMyCommands refuses anything else): 1-32 of a-z, 0-9, _.
COMMAND_NAME = re.compile(r"[a-z0-9_]{1,32}")


@dataclass(frozen=True, slots=True)
class CommandContext:
    """A command as received: the event, the text after the command, and its receipt."""

    event: Inbound
    args: str
    receipt_id: str


@dataclass(frozen=True, slots=True)
class PressContext:
    """A valid button press: the event, what the token stood for, and its receipt."""

    event: ButtonPress
    payload: dict[str, Any]
    card_id: str
    receipt_id: str


# A command handler returns its reply card, or None when it already answered (an approval card).
CommandHandler = Callable[[CommandContext], Awaitable[Card | None]]
# A press handler returns the card's new content (to edit every copy), or None to leave it.
PressHandler = Callable[[PressContext], Awaitable[Card | None]]
# Free text (not a command): (event, cleaned text, inbound receipt id) -> reply card.
FreeTextHandler = Callable[[Inbound, str, str], Awaitable[Card]]
# A conversation that takes plain messages first while it runs (onboarding): its reply card,
# or None to let the message go on to the commands and the agent as usual.
Conversation = Callable[[Inbound, str, str], Awaitable[Card | None]]


@dataclass(frozen=True, slots=True)
class Command:
    """A command a router answers: its name (no slash), what /help says of it, its handler."""

    name: str
    summary: str
    handler: CommandHandler
    usage: str = ""


class Router:
    """What one feature answers. Filled once, before it is included in the registry."""

    def __init__(self, name: str) -> None:
        """`name`: the feature's, shown when two routers claim the same thing."""
        self.name = name
        self.commands: dict[str, Command] = {}
        self.actions: dict[str, PressHandler] = {}
        self.words: dict[str, tuple[str, str]] = {}
        self.conversation: Conversation | None = None
        self.free_text: FreeTextHandler | None = None

    def command(self, name: str, summary: str, handler: CommandHandler, usage: str = "") -> None:
        """Answer `/name` (lower case letters, digits and _, at most 32: Telegram's rule)."""
        if not COMMAND_NAME.fullmatch(name):
            raise ValueError(f"{self.name}: /{name} is not a valid command name (a-z, 0-9, _)")
        _claim(self.name, "/" + name, self.commands, name)
        self.commands[name] = Command(name, summary, handler, usage)

    def action(self, name: str, handler: PressHandler) -> None:
        """Answer the buttons whose tokens carry action `name`."""
        _claim(self.name, f"the {name} button", self.actions, name)
        self.actions[name] = handler

    def word(self, word: str, command: str, args: str = "") -> None:
        """A message that is this one word alone (any case, "Crusader!") runs `/command args`
        of this router instead of going to the agent, as the specification names some
        switches."""
        if command not in self.commands:
            raise ValueError(f"{self.name}: the word {word!r} names /{command}, not one of mine")
        _claim(self.name, f"the word {word!r}", self.words, word.lower())
        self.words[word.lower()] = (command, args)

    def converse(self, handler: Conversation) -> None:
        """Take plain messages (not commands) before the commands and the agent see them."""
        if self.conversation is not None:
            raise ValueError(f"{self.name}: already holds a conversation")
        self.conversation = handler

    def answer_free_text(self, handler: FreeTextHandler) -> None:
        """Answer what no command, word or conversation took (the agent)."""
        if self.free_text is not None:
            raise ValueError(f"{self.name}: already answers free text")
        self.free_text = handler


def _claim(router: str, what: str, taken: dict[str, Any], key: str) -> None:
    if key in taken:
        raise ValueError(f"{router}: {what} is registered twice")
