"""RouterDecision: why a model call went where it went, and how it ended; kept as a receipt."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from core.llm.types import ContextNote, Lane, Usage
from core.receipts.model import Receipt, ReceiptStatus


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


@dataclass(frozen=True, slots=True)
class RouterDecision:
    """One routed call: the lane chosen, the model, the reason, and the outcome."""

    task_type: str
    lane: Lane
    provider: str
    model: str
    rationale: str
    elapsed_ms: float
    success: bool
    error: str | None = None
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    redactions: int = 0
    id: str = field(default_factory=lambda: secrets.token_hex(16))
    timestamp: str = field(default_factory=_now)

    def receipt(
        self, parent_id: str | None, quest_id: str | None, context: ContextNote | None = None
    ) -> Receipt:
        """The receipt that records this decision (no prompt text: only counts and names,
        and with `context` the ids of the memory items the prompt held)."""
        metadata: dict[str, Any] = {
            "lane": self.lane.value,
            "provider": self.provider,
            "model": self.model,
            "cost_usd": round(self.cost_usd, 8),
            "rationale": self.rationale,
            "redactions": self.redactions,
        }
        if context is not None:
            metadata["context_compiled"] = {
                "item_ids": list(context.item_ids),
                "tokens_used": context.tokens,
            }
        return Receipt(
            action_type="router_decision",
            action_name=self.task_type,
            inputs={"task_type": self.task_type, "lane": self.lane.value},
            outputs={
                "input_tokens": self.usage.input_tokens,
                "output_tokens": self.usage.output_tokens,
            },
            status=ReceiptStatus.SUCCESS if self.success else ReceiptStatus.FAILURE,
            duration_ms=round(self.elapsed_ms, 3),
            token_count=self.usage.total,
            cognition_tier=self.lane.value,
            parent_id=parent_id,
            quest_id=quest_id,
            error_message=self.error,
            metadata=metadata,
            id=self.id,
            timestamp=self.timestamp,
        )
