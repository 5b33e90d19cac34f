"""Wires the Soul, the policy engine, approvals and the workspace tools into a Lancelot."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from bot.kernel import Kernel
from bot.ledger import LEDGER_FILE
from bot.sandbox import add_shell_providers, open_effects
from bot.tools import build_tool_router
from bot.web.replay import whatif_path
from core.commands.registry import CommandRegistry
from core.errors import StorageError
from core.governance.approval_service import ApprovalService
from core.governance.approvals import ApprovalStore
from core.governance.commands import GovernanceCommands
from core.governance.crusader import CrusaderMode
from core.governance.crusader_commands import CrusaderCommands
from core.governance.effect_followups import EffectFollowUps
from core.governance.execution import Executor
from core.governance.gateway import ToolGateway
from core.governance.intents import report_interrupted
from core.governance.policy import PolicyEngine
from core.governance.rollback import RollbackJournal
from core.governance.soul_commands import SoulCommands, SoulKeeper
from core.governance.undo import UndoDesk
from core.governance.whatif import WhatIf, what_if_recorded
from core.memory import Memory
from core.memory.provider import CAPABILITIES, MemoryTools
from core.tools.capability import CapabilityTokens
from core.tools.router import ToolRouter
from core.tools.workspace import Workspace
from soul import SHIPPED_VERSIONS_DIR, Soul, SoulError, SoulStore
from soul.schema import Tier


@dataclass(frozen=True, slots=True)
class GovernanceKit:
    """The governance parts other subsystems (skills, the agent) act through."""

    policy: PolicyEngine
    gateway: ToolGateway  # the one governed path: /run, the agent's tools and skills
    approvals: ApprovalService
    approval_store: ApprovalStore  # what the digest asks about pending approvals
    keeper: SoulKeeper
    tools: ToolRouter
    capabilities: CapabilityTokens  # what a provider added later (an MCP server's) checks


def soul_store(home: Path) -> SoulStore:
    """The Soul versions of `home`: the shipped ones and those amended there."""
    return SoulStore(SHIPPED_VERSIONS_DIR, home / "soul")


def load_soul(home: Path) -> SoulKeeper:
    """The active Soul, or StorageError (exit 2) naming what is wrong with it."""
    try:
        return SoulKeeper(soul_store(home))
    except SoulError as exc:
        raise StorageError(f"soul: {exc}") from None


def _timeout_seconds(soul: Soul) -> float:
    """How long an approval stays open: the Soul's timeout, or sooner if it escalates by
    expiring."""
    rules = soul.approval_rules
    minutes = rules.timeout_minutes
    if rules.escalation.action == "expire":
        minutes = min(minutes, rules.escalation.after_minutes)
    return minutes * 60.0


def _reminder_seconds(soul: Soul) -> float | None:
    """When an undecided approval is sent again as a reminder (None: never)."""
    rules = soul.approval_rules
    if (
        rules.escalation.action != "remind"
        or rules.escalation.after_minutes >= rules.timeout_minutes
    ):
        return None
    return rules.escalation.after_minutes * 60.0


def _what_if(app: Kernel) -> Callable[[Soul, int], Awaitable[WhatIf]]:
    """What a proposed Soul would have changed over the home's recorded decisions (read in
    a thread, from the ledger's file, once what was appended is written)."""

    async def weigh(proposed: Soul, days: int) -> WhatIf:
        await app.ledger.flush()
        path = app.home / LEDGER_FILE
        return await asyncio.to_thread(what_if_recorded, path, proposed, days)

    return weigh


async def wire_governance(
    app: Kernel,
    memory: Memory | None = None,
    chosen: Callable[[str], Tier | None] = lambda _: None,
) -> GovernanceKit:
    """Register /run, /approvals, /crusader and /soul on the kernel; return the kit.
    `chosen`: the tier the owner chose for an MCP tool from /mcp (McpChoices.chosen_tier).

    The kit's approval service is started here, on the kernel's stack (it reconciles
    approvals left from before a restart and expires stale ones); actions a stop interrupted
    are reported first.
    """
    keeper = load_soul(app.home)
    crusader = CrusaderMode(app.state)
    await crusader.setup()
    switch = CrusaderCommands(
        app.commands,
        crusader,
        app.ledger,
        app.tokens,
        keeper,
        allowed=lambda: app.features.enabled("CRUSADER"),
    )
    capabilities = CapabilityTokens(app.secret)
    policy = PolicyEngine(keeper, capabilities, switch.active, app.tools.tier_of, chosen=chosen)
    workspace = Workspace(app.home / "workspace")
    journal = await RollbackJournal.create(workspace, app.ledger, app.home)
    effects = await open_effects(app, workspace, capabilities)
    router = build_tool_router(
        app.settings, app.features, workspace, capabilities, effects, app.tools
    )
    shell = await add_shell_providers(app, router, workspace, capabilities, effects)
    if memory is not None:  # remember/recall/forget are governed tools like the rest
        router.register(MemoryTools(memory, capabilities), CAPABILITIES, local=True)
    undo = UndoDesk(shell.effects, app.tokens, app.ledger, app.owner)
    app.health.register("tools", router.health)
    executor = Executor(policy, router, app.ledger, journal)
    await report_interrupted(app.ledger)  # intents a stop left without an outcome
    store = ApprovalStore(app.state)
    await store.setup()
    approvals = ApprovalService(
        store,
        app.tokens,
        app.bus,
        app.ledger,
        executor,
        timeout=lambda: _timeout_seconds(keeper()),
        remind_after=lambda: _reminder_seconds(keeper()),
        owner=app.owner,
        tasks=app.tasks,
        effects=EffectFollowUps(shell.dry_runs, undo, app.tokens),
    )
    gateway = ToolGateway(policy, approvals, executor, app.ledger, shell.dry_runs)
    registry: CommandRegistry = app.commands
    GovernanceCommands(registry, gateway, approvals, workspace, undo).register()
    switch.register()
    app.status_buttons.append(switch.button)
    undo.register(registry)
    listed = None
    if app.receipt_links:  # this process serves the page the card's list is on
        listed = lambda amendment: f"{app.settings.public_url}{whatif_path(amendment)}"  # noqa: E731
    SoulCommands(registry, keeper, app.tokens, app.ledger, _what_if(app), listed).register()
    app.status_fields["Crusader"] = switch.status
    app.status_fields["Soul"] = lambda: f"v{keeper().version}"
    app.status_fields["Tools"] = lambda: (
        "safe mode (local only)" if router.in_safe_mode() else "all"
    )
    await app.stack.enter_async_context(approvals)
    return GovernanceKit(policy, gateway, approvals, store, keeper, router, capabilities)
