"""A channel's descriptor: everything the rest of Lancelot needs to know about a channel,
declared once in the channel's own package (`spec.py`) and listed in `bot/channels/registry.py`.

The runner starts the configured channels from it, the redactor masks its secrets, pairing and
`lancelot pair` read its owner and label, the doctor runs its checks and onboarding shows its
setup hint; none of them names a channel.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from aiohttp import web
from pydantic import SecretStr

from bot.doctor.report import Finding
from bot.pairing import OwnerSetting
from core.channel import Channel
from core.config import Settings

if TYPE_CHECKING:
    from bot.kernel import Kernel
    from bot.pairing import OwnerBook


class ChannelWiring(Protocol):
    """One channel's start on a process: its web routes before the web app starts (they are
    fixed then), the channel itself once the kernel runs (stopped with the kernel's stack)."""

    @property
    def receives(self) -> bool:
        """Whether the owner can write to Lancelot through it (False: push only)."""
        ...

    def routes(self) -> list[web.RouteDef]:
        """Routes for `assemble(routes=...)` (a webhook, an app endpoint); often none."""
        ...

    async def attach(self, app: Kernel, owners: OwnerBook) -> Channel:
        """Start the channel on the assembled app; `owners` says who its owner is."""
        ...


@runtime_checkable
class Closing(Protocol):
    """A channel whose input can end (the console at the end of a piped file): `chat` stops
    then, once the replies are out."""

    @property
    def closed(self) -> asyncio.Event:
        """Set at the end of input."""
        ...


def end_of_input(channel: object) -> asyncio.Event | None:
    """Set when the channel's input ends (None: it never does)."""
    return channel.closed if isinstance(channel, Closing) else None


def no_secrets(settings: Settings) -> tuple[SecretStr | None, ...]:
    """A channel with no secret of its own."""
    return ()


def no_clock_peer(settings: Settings) -> str | None:
    """A channel that asks no peer for the time."""
    return None


@dataclass(frozen=True, slots=True, kw_only=True)
class ChannelSpec:
    """A channel, declared once."""

    name: str  # on the bus, in receipts and in owners.json
    label: str  # what the owner reads ("Google Chat")
    configured: Callable[[Settings], bool]  # its settings section is filled in: `run` starts it
    wiring: Callable[[Settings], ChannelWiring]  # how it attaches (only called when configured)
    secrets: Callable[[Settings], tuple[SecretStr | None, ...]] = no_secrets  # for redaction
    owner: OwnerSetting | None = None  # None: no pairing (the terminal is always the owner's)
    doctor: Callable[[Settings], Awaitable[list[Finding]]] | None = None  # `lancelot doctor`
    clock_peer: Callable[[Settings], str | None] = no_clock_peer  # a URL whose Date is compared
    setup_hint: str = ""  # onboarding's channels step: what to set to turn it on
    terminal: bool = False  # the console: `chat`, or `run` with a terminal and nothing else

    def secret_values(self, settings: Settings) -> list[str]:
        """The values of its secrets that are set."""
        return [value.get_secret_value() for value in self.secrets(settings) if value is not None]
