"""The composition root: builds every service, wires them, and runs them in order."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path

import aiosqlite
from aiohttp import web

from bot.agent import wire_agent
from bot.governance import GovernanceKit, wire_governance
from bot.home import load_secret, prepare_home
from bot.llm import wire_models
from bot.scheduler import wire_scheduler
from bot.skills import wire_skills
from bot.web.app import build_web_app
from bot.web.server import WebServer
from core.bus import Bus
from core.channel import Channel
from core.clock import Clock
from core.commands.basic import VERSION, BasicCommands
from core.commands.registry import CommandRegistry
from core.config import Settings
from core.delivery.outbox import DeliveryPolicy, Outbox
from core.errors import StorageError
from core.features import FeatureFlags
from core.health.alerts import HealthAlerts
from core.health.snapshot import HealthMonitor
from core.llm.types import ModelRouter
from core.orchestrator import Orchestrator
from core.receipts.ledger import SqliteLedger
from core.receipts.model import Receipt
from core.receipts.redaction import Redactor
from core.scheduler import Scheduler
from core.security.gate import InputGate
from core.security.ratelimit import SlidingWindowLimiter
from core.security.sanitizer import Sanitizer
from core.security.tokens import ActionTokens
from core.security.viewer_access import ViewerAccess
from core.skills.runner import SkillRunner
from core.state import open_state_db

log = logging.getLogger(__name__)


@dataclass
class Lancelot:
    """Everything the running process holds; channels attach to it."""

    settings: Settings
    home: Path
    stack: AsyncExitStack
    bus: Bus
    ledger: SqliteLedger
    state: aiosqlite.Connection
    tokens: ActionTokens
    viewer: ViewerAccess
    health: HealthMonitor
    features: FeatureFlags
    commands: CommandRegistry
    outbox: Outbox
    web_port: int | None = None
    governance: GovernanceKit | None = None
    scheduler: Scheduler | None = None
    skill_runner: SkillRunner | None = None
    alerts: HealthAlerts | None = None
    models: ModelRouter | None = None  # the model router (bot/llm.py)
    status_fields: dict[str, Callable[[], str]] = field(default_factory=dict)

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
        """Where the web app answers."""
        return f"http://{self.settings.web.host}:{self.web_port}"


def redactor_for(settings: Settings) -> Redactor:
    """A redactor that also knows every configured secret value."""
    values = [
        settings.secret,
        settings.telegram.bot_token,
        settings.telegram.webhook_secret,
        settings.gchat.webhook_url,
        settings.llm.openai_api_key,
        settings.llm.anthropic_api_key,
        settings.llm.gemini_api_key,
    ]
    return Redactor(v.get_secret_value() for v in values if v is not None)


async def _ledger_check(ledger: SqliteLedger) -> str | None:
    return None if ledger.healthy else "receipt ledger is not writable"


@contextlib.asynccontextmanager
async def assemble(
    settings: Settings,
    *,
    features: FeatureFlags | None = None,
    web: bool = True,
    web_optional: bool = False,
    routes: Iterable[web.RouteDef] = (),
    delivery: DeliveryPolicy | None = None,
    clock: Clock | None = None,
) -> AsyncIterator[Lancelot]:
    """Build and start the core services; stop them in reverse order on exit.

    Raises StorageError (one clear line) if the data directory, a database or the web port
    cannot be used. With `web_optional`, a busy port only logs a warning. `routes` are added
    to the web app (a channel's webhook); `delivery` and `clock` tune the outbox.
    """
    async with AsyncExitStack() as stack:
        home = prepare_home(settings.home)
        secret = load_secret(settings, home)
        ledger = await stack.enter_async_context(
            SqliteLedger(
                home / "ledger.db",
                redactor=redactor_for(settings),
                batch_size=settings.ledger.batch_size,
                flush_interval=settings.ledger.flush_interval_ms / 1000,
            )
        )
        state = await open_state_db(home / "state.db")
        stack.push_async_callback(state.close)
        tokens = ActionTokens(state, secret)
        await tokens.setup()
        viewer = ViewerAccess(
            state,
            secret,
            link_ttl=settings.web.link_ttl_seconds,
            session_ttl=settings.web.session_ttl_seconds,
        )
        await viewer.setup()
        outbox = Outbox(state, ledger, delivery, clock)
        await outbox.setup()
        await stack.enter_async_context(outbox)
        health = HealthMonitor()
        health.register("ledger", lambda: _ledger_check(ledger))
        app = Lancelot(
            settings=settings,
            home=home,
            stack=stack,
            bus=Bus(),
            ledger=ledger,
            state=state,
            tokens=tokens,
            viewer=viewer,
            health=health,
            features=features or FeatureFlags(),
            commands=CommandRegistry(),
            outbox=outbox,
        )
        if web:
            await _start_web(app, optional=web_optional, routes=routes)
        BasicCommands(
            registry=app.commands,
            bus=app.bus,
            ledger=ledger,
            health=health,
            features=app.features,
            viewer=viewer if app.web_port is not None or web_optional else None,
            public_url=settings.public_url,
            link_ttl_seconds=settings.web.link_ttl_seconds,
            status_fields=app.status_fields,
        ).register()
        app.models = await wire_models(app)
        if app.features.enabled("SOUL"):
            approvals = await wire_governance(app, secret)
            await stack.enter_async_context(approvals)
            if app.features.enabled("SKILLS") and app.governance is not None:
                await wire_skills(app, app.governance)
        wire_agent(app, app.models)
        await wire_scheduler(app, clock)
        orchestrator = Orchestrator(
            app.bus,
            ledger,
            InputGate(
                Sanitizer(),
                SlidingWindowLimiter(limit=settings.limits.rate_per_minute),
                settings.limits.max_message_chars,
            ),
            app.commands,
            tokens,
        )
        await stack.enter_async_context(health)
        runner = asyncio.create_task(orchestrator.run(), name="orchestrator")
        stack.push_async_callback(_cancel, runner)
        ledger.append(
            Receipt(
                action_type="system",
                action_name="startup",
                inputs={"version": VERSION, "web_port": app.web_port},
            )
        )
        stack.push_async_callback(_record_shutdown, ledger)
        yield app


async def _start_web(app: Lancelot, *, optional: bool, routes: Iterable[web.RouteDef]) -> None:
    web_app = build_web_app(
        ledger=app.ledger,
        access=app.viewer,
        health=app.health,
        page_size=app.settings.web.page_size,
        routes=routes,
    )
    server = WebServer(web_app, app.settings.web.host, app.settings.web.port)
    try:
        await app.stack.enter_async_context(server)
    except StorageError as exc:
        if not optional:
            raise
        log.warning("%s; receipt links point at the instance already serving it", exc)
        return
    app.web_port = server.port


async def _cancel(task: asyncio.Task[None]) -> None:
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


async def _record_shutdown(ledger: SqliteLedger) -> None:
    ledger.append(Receipt(action_type="system", action_name="shutdown"))
    await ledger.flush()
