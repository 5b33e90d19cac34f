"""schedule.propose: the agent's way to propose a job, a governed tool like the rest. It
sends the owner the same card /remind does (or asks which time was meant); nothing is
created until the owner taps Create."""

from __future__ import annotations

import uuid

from core.bus import Bus
from core.errors import ToolFailed
from core.scheduler.chat_jobs import REMINDER, TASK
from core.scheduler.proposals import JobProposals
from core.tools.action import ToolAction
from core.tools.base import ToolResult
from core.tools.capability import CapabilityTokens

PROPOSE = "schedule.propose"
CAPABILITIES = (PROPOSE,)


class ProposalTool:
    """Serves schedule.propose: {"when": "...", "what": "...", "kind": "reminder"|"task"}."""

    name = "scheduler"

    def __init__(self, proposals: JobProposals, bus: Bus, capabilities: CapabilityTokens) -> None:
        self._proposals = proposals
        self._bus = bus
        self._capabilities = capabilities

    async def run(self, action: ToolAction, capability: str | None) -> ToolResult:
        """Send the proposal (or the question) card; a time that cannot be used fails with
        the reason, for the model to tell the owner."""
        self._capabilities.check(capability, action.digest)
        if action.capability != PROPOSE:
            raise ToolFailed(f"the scheduler does not serve {action.capability}")
        when, what = str(action.params.get("when", "")), str(action.params.get("what", ""))
        kind = TASK if action.params.get("kind") == TASK else REMINDER
        card_id = f"propose-{uuid.uuid4().hex[:16]}"
        offered = await self._proposals.offer(when, card_id, via="agent", what=what, kind=kind)
        if not offered.ok:
            return ToolResult(1, f"{offered.outcome}. {offered.card.body}", provider=self.name)
        await self._bus.broadcast(offered.card)
        return ToolResult(0, offered.outcome, provider=self.name)
