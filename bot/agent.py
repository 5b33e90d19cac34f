"""Wires the agent: free text from the owner goes to it, with governed tools."""

from __future__ import annotations

from collections.abc import Callable

from bot.governance import GovernanceKit
from bot.kernel import Kernel
from bot.memory import agent_memory
from core.agent.agent import CARRY_OUT, Agent
from core.agent.budget_hold import BudgetHold
from core.agent.flow_checks import FlowChecks
from core.agent.progress import STOP, ProgressTuning
from core.agent.quest import AgentLimits
from core.agent.stops import RunningTasks
from core.agent.tools import ToolTable
from core.commands.registry import Router
from core.files.pictures import Pictures
from core.llm.budget import Budget
from core.llm.types import ModelRouter
from core.memory import Memory
from core.tools.definition import ToolSetup
from core.tools.workspace import Workspace
from soul.schema import FlowRules

MB = 1024 * 1024


def wire_agent(
    app: Kernel,
    models: ModelRouter,
    kit: GovernanceKit | None,
    limits: AgentLimits | None = None,
    memory: Memory | None = None,
    budget: Budget | None = None,
) -> Agent:
    """Include the agent's router: free text, its Carry it out and Stop buttons, /stop.

    Its tools act through governance (`kit`); without it (FEATURE_SOUL off) the model gets
    no way to act, only to answer. With `memory`, it sees the chat's conversation and what
    was remembered, and may remember, recall and forget. With a spending `budget` capped,
    a request that finds it used up is held behind a card that asks first.
    """
    gateway = kit.gateway if kit is not None else None
    workspace = Workspace(app.home / "workspace")
    setup = ToolSetup(app.settings, workspace, kit is not None, memory is not None)
    tools = ToolTable.offered(app.tools, setup)
    running = RunningTasks(app.bus, app.ledger, app.tokens, app.tasks, _progress(app))
    limits = limits or AgentLimits(local_answers=app.settings.llm.local_model is not None)
    agent = Agent(
        models,
        tools,
        gateway,
        app.bus,
        app.ledger,
        app.features,
        limits,
        tokens=app.tokens,
        memory=agent_memory(app, memory),
        running=running,
        checks=FlowChecks(rules=_flow_rules(kit)),
        pictures=Pictures(workspace, int(app.settings.files.max_image_mb * MB)),
    )
    router = Router("agent")
    if budget is not None and budget.caps.capped:
        hold = BudgetHold(
            budget, agent.handle, models, app.tokens, app.bus, app.ledger, limits, app.owner
        )
        hold.register(router)
    else:
        router.answer_free_text(agent.handle)
    if kit is not None:  # an approved step whose request a restart stopped: answer it
        kit.approvals.when_unwaited(agent.resume)
    router.action(CARRY_OUT, agent.carry_out)
    router.command("stop", "stop what I am doing in this chat", running.on_stop_command)
    router.action(STOP, running.on_stop_press)
    app.commands.include(router)
    app.status_fields["Agent"] = lambda: (
        "ready" if models.has_flagship() else "no model provider (commands only)"
    )
    return agent


def _flow_rules(kit: GovernanceKit | None) -> Callable[[], FlowRules]:
    """The active Soul's flow rules, read at each call; their defaults without governance."""
    if kit is None:
        return FlowRules
    keeper = kit.keeper
    return lambda: keeper().flow_rules


def _progress(app: Kernel) -> ProgressTuning:
    """How a running request's progress message behaves, from the settings."""
    progress = app.settings.progress
    return ProgressTuning(after=progress.after_seconds, interval=progress.edit_interval_seconds)
