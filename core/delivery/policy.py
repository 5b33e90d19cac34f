"""Delivery policy (pacing, retries, backoff) and the bookkeeping around a failed delivery."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass

from core.delivery.store import OutboxRow
from core.receipts.model import Receipt, ReceiptStatus
from core.runtime.backoff import BackoffConfig


@dataclass(frozen=True, slots=True)
class DeliveryPolicy:
    """How hard and how fast the outbox delivers."""

    # Pacing (0: none). A private chat is not paced ahead of time; a 429 says when to retry.
    global_rate: float = 30.0  # messages per second on one channel, all chats together
    global_burst: int = 30  # of those, how many may go at once
    group_rate: float = 20 / 60  # messages per second to one group chat (20 a minute)
    group_burst: int = 20
    max_attempts: int = 16  # failed attempts (429s not counted) before a row is failed
    backoff_base: float = 1.0  # first retry delay, doubled each time...
    backoff_cap: float = 60.0  # ...up to this
    first_attempt_wait: float = 30.0  # how long send() waits for its first attempt
    keep_days: float = 30.0  # delivered and failed rows are pruned after this

    @classmethod
    def paced(cls, global_per_second: float, group_per_minute: float) -> DeliveryPolicy:
        """The default policy with these limits (the `delivery` settings); bursts as big as
        one second's (channel) and one minute's (group) allowance."""
        return cls(
            global_rate=global_per_second,
            global_burst=max(1, round(global_per_second)),
            group_rate=group_per_minute / 60,
            group_burst=max(1, round(group_per_minute)),
        )

    @property
    def retry_backoff(self) -> BackoffConfig:
        """Doubling from backoff_base up to backoff_cap, each delay less up to a fifth."""
        return BackoffConfig(self.backoff_base, self.backoff_cap, jitter=0.2)

    def backoff(self, attempts: int) -> float:
        """The delay before retry number `attempts` (with a little jitter)."""
        return self.retry_backoff.delay(attempts - 1)


def failure_receipt(row: OutboxRow, exc: Exception) -> Receipt:
    """The receipt for a card (or edit) given up on."""
    return Receipt(
        action_type="delivery",
        action_name="failed",
        inputs={
            "channel": row.channel,
            "chat_id": row.chat_id,
            "kind": row.kind.value,
            "card_id": row.card.correlation_id,
            "title": row.card.title[:200],
        },
        outputs={"parts": row.parts, "parts_delivered": len(row.message_ids)},
        status=ReceiptStatus.FAILURE,
        error_message=str(exc)[:500],
        metadata={"attempts": row.attempts, "outbox_id": row.id},
    )


async def let_finish(task: asyncio.Future[None], grace: float) -> None:
    """Wait up to `grace` for a task nobody waits for any more, then drop it quietly.

    The caller is being cancelled and re-raises its own cancellation; only this wait ends.
    """
    with contextlib.suppress(Exception, asyncio.CancelledError):
        async with asyncio.timeout(grace):
            await asyncio.shield(task)
    task.cancel()
    if task.done() and not task.cancelled():
        task.exception()  # retrieved: no "exception was never retrieved" noise
