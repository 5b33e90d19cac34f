"""The kernel every wiring module builds on: the services `assemble` starts first, complete."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path

import aiosqlite

from bot.web.memory import MemoryPage
from core.bus import Bus
from core.channel import Channel
from core.commands.basic import StatusButton
from core.commands.registry import CommandRegistry
from core.config import Settings
from core.delivery.inbox import UpdateInbox
from core.delivery.outbox import Outbox
from core.delivery.writer import StateWriter
from core.features import FeatureFlags
from core.health.snapshot import HealthMonitor
from core.receipts.ledger import SqliteLedger
from core.runtime.tasks import Supervisor
from core.security.owner_view import OwnerView
from core.security.tokens import ActionTokens
from core.security.viewer_access import ViewerAccess
from core.tools.tool_registry import ToolRegistry

# /status lines that subsystems add: a name and a function giving its current value.
StatusFields = dict[str, Callable[[], str]]
StatusButtons = list[StatusButton]  # buttons under /status (Crusader on/off)


@dataclass(frozen=True, slots=True, kw_only=True)
class Kernel:
    """The started core services. Wiring modules (bot/llm.py, bot/governance.py, ...) take
    this, register on it and return their own kit; none of them sees the whole app."""

    settings: Settings
    home: Path
    secret: bytes
    stack: AsyncExitStack
    tasks: Supervisor  # every background task of the app starts through it
    bus: Bus
    ledger: SqliteLedger
    state: aiosqlite.Connection
    tokens: ActionTokens
    viewer: ViewerAccess
    health: HealthMonitor
    features: FeatureFlags
    commands: CommandRegistry
    outbox: Outbox
    inbox: UpdateInbox  # updates kept before a channel confirms them, marked done once handled
    writer: StateWriter  # state.db's group commit: outbox, inbox, button tokens, model books
    web_port: int | None  # None: no web app here
    memory_page: MemoryPage  # /memory on the web app; shows memory once it is wired
    status_fields: StatusFields
    status_buttons: StatusButtons
    receipt_links: bool  # /receipts can hand out links (this process serves the page)
    tools: ToolRegistry  # every tool's definition: the agent, governance and the router read it
    owner: OwnerView  # the owner's name and timezone, as every card shows them

    async def attach(self, channel: Channel, *, durable: bool = False) -> None:
        """Start a channel (an async context manager) and connect it to the bus.

        A durable channel's cards go through the outbox: queued in state.db, paced, retried,
        resumed after a restart; its lanes stop before the channel does.
        """
        self.bus.attach(channel, outbox=self.outbox if durable else None)
        if isinstance(channel, contextlib.AbstractAsyncContextManager):
            await self.stack.enter_async_context(channel)
        if durable:
            self.stack.push_async_callback(self.outbox.stop, channel.name)
            await self.outbox.resume(channel.name)

    async def drain(self, within: float = 30.0) -> None:
        """Finish handling what channels already published, and commit the receipts."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(within):
                await self.bus.drained()
        await self.ledger.flush()

    @property
    def web_url(self) -> str:
        """Where the web app answers, as a browser on this machine reaches it (a wildcard
        bind address, as in the container, is no address to browse to)."""
        host = self.settings.web.host
        if host in ("", "0.0.0.0", "::"):  # noqa: S104 - naming the wildcard, not binding it
            host = "localhost"
        elif ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{self.web_port}"
