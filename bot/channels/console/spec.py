"""The console's descriptor: the terminal Lancelot runs in, always its owner's (no pairing,
no secret, nothing to configure)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from aiohttp import web

from bot.channels.console.channel import NAME, ConsoleChannel, stdin_reader
from bot.channels.spec import ChannelSpec
from core.channel import Channel
from core.config import Settings

if TYPE_CHECKING:
    from bot.kernel import Kernel
    from bot.pairing import OwnerBook


class ConsoleWiring:
    """Standard input and output as a channel: coloured with a prompt on a terminal, one
    request at a time when the input is a file."""

    receives = True

    def __init__(self, settings: Settings) -> None:
        self._settings = settings

    def routes(self) -> list[web.RouteDef]:
        """The console needs none."""
        return []

    async def attach(self, app: Kernel, owners: OwnerBook) -> Channel:
        """Read stdin, print to stdout."""
        interactive = sys.stdin.isatty() and sys.stdout.isatty()
        console = ConsoleChannel(
            app.bus,
            await stdin_reader(app.tasks),
            sys.stdout,
            color=interactive,
            prompt="you> " if interactive else "",
            tasks=app.tasks,
            web_url=app.web_url if app.web_port is not None else None,
            one_at_a_time=not sys.stdin.isatty(),
        )
        await app.attach(console)
        return console


def _never(settings: Settings) -> bool:
    """Never started from the settings: by `chat`, or by `run` with a terminal and no other
    channel that receives."""
    return False


CONSOLE = ChannelSpec(
    name=NAME,
    label="the console",
    configured=_never,
    wiring=ConsoleWiring,
    terminal=True,
)
