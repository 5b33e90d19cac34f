"""The routers that answer chat: included while the app is assembled, then frozen.

The registry is where the chain's links look things up: the command a name stands for,
the handler of a button action, the conversations that see plain messages first, and the
one free-text answerer (the agent). `/help` and Telegram's command menu list `listing()`.
"""

from __future__ import annotations

from core.commands.router import (
    Command,
    CommandContext,
    CommandHandler,
    Conversation,
    FreeTextHandler,
    PressContext,
    PressHandler,
    Router,
)

__all__ = [
    "Command",
    "CommandContext",
    "CommandHandler",
    "CommandRegistry",
    "Conversation",
    "FreeTextHandler",
    "PressContext",
    "PressHandler",
    "Router",
    "parse_command",
]

# Where /help and Telegram's menu begin; every other command follows in inclusion order.
MENU_FIRST = ("start", "help", "status")


class CommandRegistry:
    """Every feature's router, in the order included (which is the order /help lists).

    Filled while the app is assembled, then frozen (as aiohttp freezes an application): from
    then on what answers a command, a button or free text cannot change. A command, button
    action or word claimed by two routers is refused when the second is included.
    """

    def __init__(self) -> None:
        self._routers: list[Router] = []
        self._commands: dict[str, tuple[Router, Command]] = {}
        self._actions: dict[str, tuple[Router, PressHandler]] = {}
        self._words: dict[str, tuple[str, str]] = {}
        self._frozen = False

    def freeze(self) -> None:
        """No inclusion from now on."""
        self._frozen = True

    @property
    def frozen(self) -> bool:
        """Whether inclusion is over."""
        return self._frozen

    def include(self, router: Router) -> None:
        """Add a feature's router; ValueError when it claims what another already holds."""
        if self._frozen:
            raise RuntimeError(f"cannot include {router.name}: the command registry is frozen")
        self._check_free(router)
        self._routers.append(router)
        self._commands.update({n: (router, c) for n, c in router.commands.items()})
        self._actions.update({n: (router, h) for n, h in router.actions.items()})
        self._words.update(router.words)

    def _check_free(self, router: Router) -> None:
        """Refuse a router that claims a name, an action or a word already held."""
        if any(r.name == router.name for r in self._routers):
            raise ValueError(f"a router named {router.name} is already included")
        clashes = [
            *(
                f"/{n} ({self._commands[n][0].name})"
                for n in router.commands
                if n in self._commands
            ),
            *(
                f"the {n} button ({self._actions[n][0].name})"
                for n in router.actions
                if n in self._actions
            ),
            *(f"the word {w!r}" for w in router.words if w in self._words),
        ]
        if router.free_text is not None and self.free_text_handler is not None:
            clashes.append("free text (already answered)")
        if clashes:
            raise ValueError(f"{router.name} claims what is taken: {', '.join(clashes)}")

    @property
    def routers(self) -> tuple[Router, ...]:
        """The routers, in the order included."""
        return tuple(self._routers)

    def parse_word(self, text: str) -> tuple[str, str] | None:
        """The (command, args) a registered word alone stands for, or None."""
        return self._words.get(text.strip().rstrip("!.").strip().lower())

    @property
    def conversations(self) -> tuple[Conversation, ...]:
        """The conversations that see plain messages first, in the order included."""
        return tuple(r.conversation for r in self._routers if r.conversation is not None)

    @property
    def free_text_handler(self) -> FreeTextHandler | None:
        """Who answers what nothing else took (the agent), if any router does."""
        return next((r.free_text for r in self._routers if r.free_text is not None), None)

    def get(self, name: str) -> Command | None:
        """A registered command by name (without the slash)."""
        found = self._commands.get(name)
        return found[1] if found is not None else None

    def press_handler(self, action: str) -> PressHandler | None:
        """The handler for a button action."""
        found = self._actions.get(action)
        return found[1] if found is not None else None

    def listing(self) -> list[Command]:
        """Every command for /help and the menu: the greeting, the list and the state
        first (what a new owner taps), then router by router in the order included."""
        every = [c for r in self._routers for c in r.commands.values()]
        return sorted(every, key=_menu_rank)  # stable: the rest keep inclusion order


def _menu_rank(command: Command) -> int:
    """Its place among MENU_FIRST, or after them all."""
    return MENU_FIRST.index(command.name) if command.name in MENU_FIRST else len(MENU_FIRST)


def parse_command(text: str) -> tuple[str, str] | None:
    """'/run ls -la' -> ('run', 'ls -la'); '/status@LancelotBot' -> ('status', ''); else None."""
    if not text.startswith("/") or len(text) < 2:
        return None
    head, _, rest = text[1:].partition(" ")
    name = head.split("@", 1)[0].lower()
    if not name.isidentifier():
        return None
    return name, rest.strip()
