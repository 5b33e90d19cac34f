"""Wires the agent: free text from the owner goes to it, with governed tools."""

from __future__ import annotations

from bot.governance import GovernanceKit
from bot.kernel import Kernel
from core.agent.agent import CARRY_OUT, Agent
from core.agent.quest import AgentLimits
from core.agent.workspace_tools import default_tools
from core.llm.types import ModelRouter
from core.tools.workspace import Workspace


def wire_agent(
    app: Kernel,
    models: ModelRouter,
    kit: GovernanceKit | None,
    limits: AgentLimits | None = None,
) -> Agent:
    """Register the agent as the kernel's free-text handler and its Carry it out button.

    Its tools act through governance (`kit`); without it (FEATURE_SOUL off) the model gets
    no way to act, only to answer.
    """
    gateway = kit.gateway if kit is not None else None
    agent = Agent(
        models,
        default_tools(Workspace(app.home / "workspace")),
        gateway,
        app.bus,
        app.ledger,
        app.features,
        limits or AgentLimits(local_answers=app.settings.llm.local_model is not None),
        tokens=app.tokens,
    )
    app.commands.free_text(agent.handle)
    app.commands.action(CARRY_OUT, agent.carry_out)
    app.status_fields["Agent"] = lambda: (
        "ready" if models.has_flagship() else "no model provider (commands only)"
    )
    return agent
