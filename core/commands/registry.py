"""Chat commands and button actions: registries that subsystems fill at composition time."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from core.events import ButtonPress, Card, Inbound

# The fixed command names (docs/architecture.md). Nothing else can be registered.
FIXED_COMMANDS = (
    "start",
    "help",
    "status",
    "health",
    "run",
    "approvals",
    "receipts",
    "jobs",
    "digest",
    "soul",
    "skills",
    "memory",
    "usage",
    "crusader",
    "undo",
    "new",
    "get",
    "stop",
    "remind",
    "features",
    "mcp",
)


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
# or None to let the message go on to the words and the free-text handler as usual.
Interceptor = Callable[[Inbound, str, str], Awaitable[Card | None]]


@dataclass(frozen=True, slots=True)
class Command:
    """A registered command."""

    name: str
    summary: str
    handler: CommandHandler
    usage: str = ""


class CommandRegistry:
    """The commands that work right now; /help lists exactly these.

    Filled while the app is assembled, then frozen (as aiohttp freezes an application): from
    then on what answers a command, a button or free text cannot change.
    """

    def __init__(self) -> None:
        self._commands: dict[str, Command] = {}
        self._actions: dict[str, PressHandler] = {}
        self._free_text: FreeTextHandler | None = None
        self._interceptor: Interceptor | None = None
        self._words: dict[str, tuple[str, str]] = {}
        self._frozen = False

    def freeze(self) -> None:
        """No registration from now on."""
        self._frozen = True

    @property
    def frozen(self) -> bool:
        """Whether registration is over."""
        return self._frozen

    def _check_open(self, what: str) -> None:
        if self._frozen:
            raise RuntimeError(f"cannot register {what}: the command registry is frozen")

    def command(self, name: str, summary: str, handler: CommandHandler, usage: str = "") -> None:
        """Register one of the fixed commands."""
        self._check_open(f"/{name}")
        if name not in FIXED_COMMANDS:
            raise ValueError(f"/{name} is not one of Lancelot's commands")
        self._commands[name] = Command(name, summary, handler, usage)

    def action(self, name: str, handler: PressHandler) -> None:
        """Register what a button action does."""
        self._check_open(f"the {name} action")
        self._actions[name] = handler

    def word(self, word: str, command: str, args: str = "") -> None:
        """A message that is this one word alone (any case, "Crusader!") runs `/command args`
        instead of going to the agent, as the specification names some switches."""
        self._check_open(f"the word {word!r}")
        if command not in FIXED_COMMANDS:
            raise ValueError(f"/{command} is not one of Lancelot's commands")
        self._words[word.lower()] = (command, args)

    def parse_word(self, text: str) -> tuple[str, str] | None:
        """The (command, args) a registered word alone stands for, or None."""
        return self._words.get(text.strip().rstrip("!.").strip().lower())

    def free_text(self, handler: FreeTextHandler) -> None:
        """Register who answers messages that are not commands (the agent)."""
        self._check_open("the free-text handler")
        self._free_text = handler

    def intercept(self, handler: Interceptor) -> None:
        """Register the conversation that sees plain messages (not commands) first."""
        self._check_open("the interceptor")
        self._interceptor = handler

    @property
    def interceptor(self) -> Interceptor | None:
        """The registered interceptor, if any."""
        return self._interceptor

    @property
    def free_text_handler(self) -> FreeTextHandler | None:
        """The registered free-text handler, if any."""
        return self._free_text

    def get(self, name: str) -> Command | None:
        """A registered command by name (without the slash)."""
        return self._commands.get(name)

    def press_handler(self, action: str) -> PressHandler | None:
        """The handler for a button action."""
        return self._actions.get(action)

    def listing(self) -> list[Command]:
        """Registered commands in the documented order."""
        return [self._commands[n] for n in FIXED_COMMANDS if n in self._commands]


def parse_command(text: str) -> tuple[str, str] | None:
    """'/run ls -la' -> ('run', 'ls -la'); '/status@LancelotBot' -> ('status', ''); else None."""
    if not text.startswith("/") or len(text) < 2:
        return None
    head, _, rest = text[1:].partition(" ")
    name = head.split("@", 1)[0].lower()
    if not name.isidentifier():
        return None
    return name, rest.strip()
