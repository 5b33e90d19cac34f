"""The composition root: builds every service, wires them, and runs them in order."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterable
from contextlib import AsyncExitStack
from dataclasses import dataclass, fields
from pathlib import Path

from aiohttp import web

from bot.agent import wire_agent
from bot.channels.registry import CHANNELS, ChannelRegistry
from bot.features import wire_features
from bot.files import FilesKit, wire_files
from bot.governance import GovernanceKit, soul_store, wire_governance
from bot.home import home_lock, keep_home_private, load_secret, prepare_home
from bot.kernel import Kernel
from bot.ledger import LEDGER_FILE, build_ledger
from bot.llm import wire_models
from bot.mcp import wire_mcp
from bot.memory import wire_memory
from bot.onboarding import saved_onboarding, wire_onboarding
from bot.scheduler import wire_scheduler
from bot.skills import wire_skills
from bot.web.app import build_web_app
from bot.web.memory import MemoryPage
from bot.web.replay import ReplayPage
from bot.web.server import WebServer
from core.agent.agent import Agent
from core.agent.catalog import BUILT_IN
from core.agent.quest import AgentLimits
from core.bus import Bus
from core.clock import Clock
from core.commands.basic import VERSION, BasicCommands
from core.commands.registry import CommandRegistry, Router
from core.config import Settings
from core.delivery.inbox import UpdateInbox
from core.delivery.outbox import DeliveryPolicy, Outbox
from core.delivery.writer import StateWriter
from core.dispatch.links import message_chain
from core.dispatch.presses import Presses
from core.features import FEATURES_FILE, FeatureFlags
from core.health.alerts import HealthAlerts
from core.health.snapshot import HealthMonitor
from core.llm.types import ModelRouter
from core.mcp import McpServers, config_path, load_config
from core.mcp.choices import CHOICES_FILE, McpChoices
from core.memory import Memory
from core.onboarding import Onboarding
from core.orchestrator import Orchestrator
from core.receipts.ledger import SqliteLedger
from core.receipts.model import Receipt
from core.receipts.redaction import Redactor
from core.runtime.tasks import Supervisor
from core.scheduler import Scheduler
from core.security.gate import InputGate
from core.security.owner_view import OwnerView
from core.security.ratelimit import SlidingWindowLimiter
from core.security.sanitizer import Sanitizer
from core.security.tokens import ActionTokens
from core.security.viewer_access import ViewerAccess
from core.skills.runner import SkillRunner
from core.state import open_state_db
from core.tools.definition import ToolDefinition
from core.tools.tool_registry import ToolRegistry


@dataclass(frozen=True, slots=True, kw_only=True)
class Lancelot(Kernel):
    """The assembled process: the kernel and every subsystem's kit, complete once built."""

    models: ModelRouter
    governance: GovernanceKit | None  # None: FEATURE_SOUL is off
    skill_runner: SkillRunner | None  # None: FEATURE_SKILLS or FEATURE_SOUL is off
    memory: Memory | None  # None: FEATURE_MEMORY is off
    files: FilesKit
    agent: Agent
    scheduler: Scheduler
    alerts: HealthAlerts
    onboarding: Onboarding  # the first conversation; pairing calls its `welcome`
    channels: ChannelRegistry  # the channels this process knows
    mcp: McpServers  # the servers of mcp.json, connecting behind readiness


def redactor_for(settings: Settings, channels: ChannelRegistry = CHANNELS) -> Redactor:
    """A redactor that also knows every configured secret value, each channel's and the MCP
    servers' env and header values included (mcp.json is read here: a JSON parse, no SDK)."""
    values = [
        settings.secret,
        settings.llm.openai_api_key,
        settings.llm.anthropic_api_key,
        settings.llm.gemini_api_key,
        settings.lookups.search_api_key,
    ]
    own = [v.get_secret_value() for v in values if v is not None]
    channel_secrets = (value for spec in channels for value in spec.secret_values(settings))
    return Redactor([*own, *channel_secrets, *load_config(config_path(settings)).secrets])


async def _ledger_check(ledger: SqliteLedger) -> str | None:
    return None if ledger.healthy else "receipt ledger is not writable"


@contextlib.asynccontextmanager
async def assemble(
    settings: Settings,
    *,
    features: FeatureFlags | None = None,
    web: bool = True,
    routes: Iterable[web.RouteDef] = (),
    delivery: DeliveryPolicy | None = None,
    clock: Clock | None = None,
    models: ModelRouter | None = None,
    agent_limits: AgentLimits | None = None,
    routers: Iterable[Router] = (),
    channels: ChannelRegistry = CHANNELS,
    tools: Iterable[ToolDefinition] = (),
) -> AsyncIterator[Lancelot]:
    """Build and start every service; stop them in reverse order on exit.

    Raises StorageError (one clear line) if the data directory, a database or the web port
    cannot be used. `routes` are added to the web app (a channel's webhook); `delivery` and
    `clock` tune the outbox; `models` replaces the model router built from the settings for
    the agent, `agent_limits` the agent's limits; `routers` are the caller's own (tests, an
    embedding program), included after the app's (one that claims a command or button the
    app holds is refused); `channels` are the channels it knows (their secrets are redacted);
    `tools` are tool definitions of the caller's, offered beside the built-in ones. Commands
    and button actions are fixed once this yields.
    """
    async with AsyncExitStack() as stack:
        kernel = await _start_kernel(
            settings,
            stack,
            features or FeatureFlags(store=settings.home / FEATURES_FILE),
            web=web,
            routes=routes,
            delivery=delivery,
            clock=clock,
            channels=channels,
            tools=ToolRegistry((*BUILT_IN, *tools)),
        )
        app = await _wire(kernel, clock, models, agent_limits, channels)
        for router in routers:
            app.commands.include(router)
        app.commands.freeze()
        orchestrator = _orchestrator(app)
        await stack.enter_async_context(app.health)
        runner = app.tasks.spawn(orchestrator.run(), name="orchestrator")
        stack.push_async_callback(_cancel, runner)
        app.ledger.append(
            Receipt(
                action_type="system",
                action_name="startup",
                inputs={"version": VERSION, "web_port": app.web_port},
            )
        )
        stack.push_async_callback(_record_shutdown, app.ledger)
        keep_home_private(app.home)
        yield app


def _replay_page(viewer: ViewerAccess, home: Path, ledger: SqliteLedger) -> ReplayPage:
    """The receipt page's replay of a request and an amendment's what-if, reading the home's
    ledger file and Souls."""
    return ReplayPage(viewer, home / LEDGER_FILE, soul_store(home), ledger.flush)


async def _start_kernel(
    settings: Settings,
    stack: AsyncExitStack,
    features: FeatureFlags,
    *,
    web: bool,
    routes: Iterable[web.RouteDef],
    delivery: DeliveryPolicy | None,
    clock: Clock | None,
    channels: ChannelRegistry,
    tools: ToolRegistry,
) -> Kernel:
    """The data directory, the ledger, state.db and its stores, the outbox, the web app."""
    home = prepare_home(settings.home)
    stack.enter_context(home_lock(home))  # held until everything else has stopped
    secret = load_secret(settings, home)
    tasks = Supervisor()
    stack.push_async_callback(tasks.aclose)  # last out: after every service has stopped
    ledger = await stack.enter_async_context(
        build_ledger(settings, home, redactor_for(settings, channels), tasks)
    )
    state = await open_state_db(home / "state.db")
    stack.push_async_callback(state.close)
    # Small writes to state.db committed in groups: the outbox's, the inbox's, new button
    # tokens, the model books' (closed before state, after all of them).
    writer = await stack.enter_async_context(StateWriter(home / "state.db", tasks=tasks))
    tokens = ActionTokens(state, secret, writer=writer)
    await tokens.setup()
    viewer = ViewerAccess(
        state,
        secret,
        link_ttl=settings.web.link_ttl_seconds,
        session_ttl=settings.web.session_ttl_seconds,
    )
    await viewer.setup()
    paced = settings.delivery
    policy = delivery or DeliveryPolicy.paced(paced.global_per_second, paced.group_per_minute)
    outbox = Outbox(state, ledger, policy, clock, writer=writer, tasks=tasks)
    await outbox.setup()
    await stack.enter_async_context(outbox)
    inbox = UpdateInbox(state, writer, ledger)
    await inbox.setup()
    health = HealthMonitor(tasks=tasks)
    health.register("ledger", lambda: _ledger_check(ledger))
    health.register("tasks", tasks.health)
    web_port = None
    owner = OwnerView(settings.owner_timezone)
    memory_page = MemoryPage(viewer, owner)
    if web:
        web_app = build_web_app(
            ledger=ledger,
            access=viewer,
            health=health,
            page_size=settings.web.page_size,
            routes=[
                *memory_page.routes(),
                *_replay_page(viewer, home, ledger).routes(),
                *routes,
            ],
            secure_cookies=settings.public_url.startswith("https://"),
            owner=owner,
        )
        server = WebServer(web_app, settings.web.host, settings.web.port)
        await stack.enter_async_context(server)
        web_port = server.port
    return Kernel(
        settings=settings,
        home=home,
        secret=secret,
        stack=stack,
        tasks=tasks,
        bus=Bus(inbox=inbox, redactor=redactor_for(settings, channels)),
        ledger=ledger,
        state=state,
        tokens=tokens,
        viewer=viewer,
        health=health,
        features=features,
        commands=CommandRegistry(),
        outbox=outbox,
        inbox=inbox,
        writer=writer,
        web_port=web_port,
        memory_page=memory_page,
        status_fields={},
        status_buttons=[],
        receipt_links=web_port is not None,
        tools=tools,
        owner=owner,
    )


async def _wire(
    kernel: Kernel,
    clock: Clock | None,
    models: ModelRouter | None,
    agent_limits: AgentLimits | None,
    channels: ChannelRegistry,
) -> Lancelot:
    """Every subsystem on the kernel, in the order they depend on each other."""
    settings = kernel.settings
    basic = BasicCommands(
        registry=kernel.commands,
        bus=kernel.bus,
        ledger=kernel.ledger,
        health=kernel.health,
        features=kernel.features,
        viewer=kernel.viewer if kernel.receipt_links else None,
        public_url=settings.public_url,
        link_ttl_seconds=settings.web.link_ttl_seconds,
        status_fields=kernel.status_fields,
        status_buttons=kernel.status_buttons,
    )
    basic.register()
    wire_features(kernel)
    saved = await saved_onboarding(kernel)
    chosen = (await saved.load()).provider  # the owner's choice in chat wins
    router = await wire_models(kernel, redactor_for(settings, channels), chosen)
    memory = await wire_memory(kernel, redactor_for(settings, channels))
    onboarding = await wire_onboarding(kernel, saved, router, memory, channels, basic.start)
    mcp_choices = McpChoices(kernel.home / CHOICES_FILE)  # the owner's, from /mcp
    governance = None
    if kernel.features.enabled("SOUL"):
        governance = await wire_governance(kernel, memory, mcp_choices.chosen_tier)
    skill_runner = None
    if governance is not None and kernel.features.enabled("SKILLS"):
        skill_runner = await wire_skills(kernel, governance)
    files = await wire_files(kernel, governance)
    agent_models = models or router
    agent = wire_agent(kernel, agent_models, governance, agent_limits, memory, router.budget)
    timed = await wire_scheduler(
        kernel, governance, skill_runner, clock, memory, onboarding, budget=router.budget
    )
    mcp = await wire_mcp(kernel, redactor_for(settings), governance, mcp_choices)
    return Lancelot(
        **{f.name: getattr(kernel, f.name) for f in fields(Kernel)},
        models=agent_models,
        governance=governance,
        skill_runner=skill_runner,
        memory=memory,
        files=files,
        agent=agent,
        scheduler=timed.scheduler,
        alerts=timed.alerts,
        onboarding=onboarding,
        channels=channels,
        mcp=mcp,
    )


def _orchestrator(app: Lancelot) -> Orchestrator:
    """The orchestrator on the message chain (`core/dispatch/links.py`) and the press path."""
    limits = app.settings.limits
    gate = InputGate(
        Sanitizer(), SlidingWindowLimiter(limit=limits.rate_per_minute), limits.max_message_chars
    )
    chain = message_chain(gate, app.ledger, app.commands, app.bus, app.files.intake)
    presses = Presses(app.commands, app.tokens, app.bus, app.ledger)
    return Orchestrator(app.bus, app.ledger, chain, presses, tasks=app.tasks)


async def _cancel(task: asyncio.Task[None]) -> None:
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


async def _record_shutdown(ledger: SqliteLedger) -> None:
    ledger.append(Receipt(action_type="system", action_name="shutdown"))
    await ledger.flush()
