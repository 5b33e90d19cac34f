"""The agent's hands on memory, as governed tools: memory.remember, memory.recall and
memory.forget are ToolActions like any other (the policy decides, receipts record), served
by this provider in the tool router."""

from __future__ import annotations

import json

from core.errors import ToolFailed
from core.memory.model import Committed, MemoryRefused, Provenance
from core.memory.service import Memory
from core.tools.action import ToolAction
from core.tools.base import ToolResult
from core.tools.capability import CapabilityTokens

REMEMBER = "memory.remember"
RECALL = "memory.recall"
FORGET = "memory.forget"
CAPABILITIES = (REMEMBER, RECALL, FORGET)


class MemoryTools:
    """Serves the memory.* capabilities. `provenance` in a remember's params says where its
    text came from: the agent's own words, or a tool's output it read (held for the owner)."""

    name = "memory"

    def __init__(self, memory: Memory, capabilities: CapabilityTokens) -> None:
        self._memory = memory
        self._capabilities = capabilities

    async def run(self, action: ToolAction, capability: str | None) -> ToolResult:
        """Remember, recall or forget; a refusal (too long, a secret) is a failed run."""
        self._capabilities.check(capability, action.digest)
        params = action.params
        try:
            if action.capability == REMEMBER:
                output = await self._remember(params)
            elif action.capability == RECALL:
                output = await self._recall(str(params.get("query", "")))
            elif action.capability == FORGET:
                output = await self._forget(str(params.get("id", "")))
            else:
                raise ToolFailed(f"memory does not serve {action.capability}")
        except MemoryRefused as exc:
            raise ToolFailed(str(exc), user_message=exc.user_message) from None
        return ToolResult(0, output, provider=self.name)

    async def _remember(self, params: dict[str, object]) -> str:
        provenance = Provenance(str(params.get("provenance", Provenance.AGENT)))
        chat = params.get("chat")
        outcome = await self._memory.remember(
            str(params.get("text", "")),
            provenance=provenance,
            chat=str(chat) if chat else None,
            source=str(params.get("source") or "agent"),
        )
        if isinstance(outcome, Committed):
            return json.dumps({"remembered": outcome.item_id})
        return json.dumps(
            {"held_for_the_owner": outcome.quarantine_id, "why": outcome.why}, ensure_ascii=False
        )

    async def _recall(self, query: str) -> str:
        found = await self._memory.recall(query, limit=5)
        return json.dumps([{"id": i.id, "text": i.text} for i in found], ensure_ascii=False)

    async def _forget(self, item_id: str) -> str:
        outcome = await self._memory.forget(item_id, provenance=Provenance.AGENT)
        return json.dumps({"forgot": item_id, "commit": getattr(outcome, "id", None)})
