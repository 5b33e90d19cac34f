"""Wires the agent: free text from the owner goes to it, with governed tools."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.agent.agent import CARRY_OUT, Agent
from core.agent.quest import AgentLimits
from core.agent.workspace_tools import default_tools
from core.errors import ProviderUnavailable
from core.governance.gateway import ToolGateway
from core.llm.types import Completion, CompletionRequest, Lane, ModelRouter
from core.tools.workspace import Workspace

if TYPE_CHECKING:
    from bot.app import Lancelot


class NoModels:
    """A ModelRouter with no provider at all: the agent then answers honestly that free-form
    reasoning needs one. Replaced by the real router (bot/llm.py) when it is wired."""

    def has_flagship(self) -> bool:
        """No flagship."""
        return False

    def has_local(self) -> bool:
        """No local model either."""
        return False

    async def complete(
        self,
        request: CompletionRequest,
        *,
        task_type: str,
        lane: Lane = Lane.FLAGSHIP_FAST,
        parent_id: str | None = None,
        quest_id: str | None = None,
    ) -> Completion:
        """Always unavailable."""
        raise ProviderUnavailable(f"no model provider is configured for {lane.value}")


def wire_agent(
    app: Lancelot, router: ModelRouter | None = None, limits: AgentLimits | None = None
) -> Agent:
    """Register the agent as `app`'s free-text handler (replacing any earlier one).

    Its tools act through governance (`app.governance`, set by bot.governance); without it
    the model gets no way to act, only to answer.
    """
    models = router or NoModels()
    kit = app.governance
    gateway = ToolGateway(kit.policy, kit.approvals, kit.executor, app.ledger) if kit else None
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
