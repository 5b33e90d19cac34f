"""The receipts one agent request leaves, linked by parent_id and quest_id."""

from __future__ import annotations

from typing import Any

from core.receipts.base import ReceiptStore
from core.receipts.model import Receipt, ReceiptStatus


class Trail:
    """Records the steps of one quest (quest id = the inbound message's receipt id)."""

    def __init__(self, ledger: ReceiptStore, quest_id: str) -> None:
        self.ledger = ledger
        self.quest_id = quest_id
        self.root = quest_id  # replaced by the agent_request receipt once recorded

    def record(
        self,
        action_type: str,
        action_name: str,
        *,
        inputs: Any = None,
        outputs: Any = None,
        status: ReceiptStatus = ReceiptStatus.SUCCESS,
        parent_id: str | None = None,
        error: str | None = None,
        tokens: int | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> str:
        """Append one receipt under `parent_id` (default: the request) and return its id."""
        receipt = Receipt(
            action_type=action_type,
            action_name=action_name,
            inputs=inputs,
            outputs=outputs,
            status=status,
            parent_id=parent_id or self.root,
            quest_id=self.quest_id,
            error_message=error,
            token_count=tokens,
            metadata=metadata or {},
        )
        self.ledger.append(receipt)
        return receipt.id
