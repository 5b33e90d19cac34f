"""After a restart: every intent left without an outcome is reported as interrupted.

The executor commits a `tool_intent` receipt before an action that may change anything runs,
naming the id its `tool_run` outcome will have. A crash between the two leaves an intent
alone; this finds it and records a `tool_interrupted` failure under it (the digest and the
receipt page show it), so an action that may have happened is never silently dropped.
"""

from __future__ import annotations

import logging

from core.receipts.base import ReceiptQuery, ReceiptStore
from core.receipts.model import Receipt, ReceiptStatus, StoredReceipt
from core.receipts.registry import GovernanceReceipt

log = logging.getLogger(__name__)

PAGE = 500
INTERRUPTED = (
    "interrupted: Lancelot stopped after this began and before its outcome was recorded;"
    " it may or may not have run (look at the workspace)"
)


async def report_interrupted(ledger: ReceiptStore) -> list[StoredReceipt]:
    """Record each intent since the last check that has no outcome; return those intents.
    Run at startup, before any action can start."""
    await ledger.flush()
    checked_upto = await _last_checked(ledger)
    interrupted: list[StoredReceipt] = []
    newest = 0
    before: int | None = None
    while True:
        page = await ledger.page(
            ReceiptQuery(action_type=GovernanceReceipt.TOOL_INTENT, before_seq=before, limit=PAGE)
        )
        fresh = [r for r in page.receipts if r.seq > checked_upto]
        newest = max([newest, *(r.seq for r in fresh)])
        for intent in fresh:
            if not await _has_outcome(ledger, intent):
                interrupted.append(intent)
        if len(fresh) < len(page.receipts) or page.next_before_seq is None:
            break
        before = page.next_before_seq
    for intent in reversed(interrupted):  # oldest first
        log.warning("action interrupted by a stop: %s", intent.action_name)
        ledger.append(
            Receipt(
                action_type=GovernanceReceipt.TOOL_INTERRUPTED,
                action_name=intent.action_name,
                inputs=intent.decoded("inputs"),
                status=ReceiptStatus.FAILURE,
                error_message=INTERRUPTED,
                parent_id=intent.id,
                quest_id=intent.quest_id,
                metadata={"intent_seq": intent.seq},
            )
        )
    if newest:
        ledger.append(
            Receipt(
                action_type=GovernanceReceipt.INTENTS_CHECKED,
                action_name="startup",
                inputs={"upto_seq": newest},
                outputs={"interrupted": len(interrupted)},
            )
        )
    await ledger.flush()
    return list(reversed(interrupted))


async def _last_checked(ledger: ReceiptStore) -> int:
    """The newest intent seq a previous start already matched (0: none)."""
    page = await ledger.page(ReceiptQuery(action_type=GovernanceReceipt.INTENTS_CHECKED, limit=1))
    if not page.receipts:
        return 0
    inputs = page.receipts[0].decoded("inputs")
    upto = inputs.get("upto_seq") if isinstance(inputs, dict) else None
    return upto if isinstance(upto, int) else 0


async def _has_outcome(ledger: ReceiptStore, intent: StoredReceipt) -> bool:
    outputs = intent.decoded("outputs")
    outcome_id = outputs.get("outcome_id") if isinstance(outputs, dict) else None
    if isinstance(outcome_id, str) and await ledger.get(outcome_id) is not None:
        return True
    # Already reported (a start that stopped before writing its check mark).
    return any(
        child.action_type == GovernanceReceipt.TOOL_INTERRUPTED
        for child in await ledger.children(intent.id, limit=10)
    )
