"""The durable outbox: cards for a channel are written to state.db first, then delivered.

Delivery runs in one lane per chat, in order: paced (a short burst, then about one message
per second), a 429 waits its retry_after, other failures retry with capped exponential
backoff, and a permanent refusal or too many attempts marks the row failed with a receipt.
A part counts as delivered only when the platform returned its message id, which is stored
at once, so neither an outage nor a restart loses a card or sends a part twice (except in
one window no platform lets us close: a crash after the platform accepted a message and
before its id was stored resends that message).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import random
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Self

import aiosqlite

from core.channel import Channel, PartedChannel
from core.clock import Clock, SystemClock
from core.errors import (
    DeliveryDeferred,
    DeliveryFailed,
    LancelotError,
    PermanentError,
    RateLimited,
    TransientError,
)
from core.events import Card, MessageRef
from core.outbox_store import DeliveryKind, OutboxRow, OutboxState, OutboxStore, card_to_json
from core.pacing import TokenBucket
from core.receipts.base import ReceiptStore
from core.receipts.model import Receipt, ReceiptStatus

log = logging.getLogger(__name__)

# Called when a card is fully delivered: (card correlation id, the message standing for it).
OnDelivered = Callable[[str, MessageRef], None]
Outcome = MessageRef | LancelotError

REMEMBERED_ON_RESUME = 10_000
STOP_GRACE = 10.0  # seconds a stop waits for a message already on its way
MAX_IDLE_BUCKETS = 1024


@dataclass(frozen=True, slots=True)
class DeliveryPolicy:
    """How hard and how fast the outbox delivers."""

    chat_rate: float = 1.0  # sustained messages per second to one chat (0: no pacing)
    chat_burst: int = 3  # messages that may go at once before pacing starts
    max_attempts: int = 16  # failed attempts (429s not counted) before a row is failed
    backoff_base: float = 1.0  # first retry delay, doubled each time...
    backoff_cap: float = 60.0  # ...up to this
    first_attempt_wait: float = 30.0  # how long send() waits for its first attempt
    keep_days: float = 30.0  # delivered and failed rows are pruned after this

    def backoff(self, attempts: int) -> float:
        """The delay before retry number `attempts` (with a little jitter)."""
        delay = min(self.backoff_cap, self.backoff_base * 2.0 ** max(0, attempts - 1))
        return delay * random.uniform(0.8, 1.0)


@dataclass(eq=False)
class _Lane:
    rows: deque[OutboxRow] = field(default_factory=deque)
    task: asyncio.Task[None] | None = None


class Outbox:
    """Durable, ordered, paced delivery for the channels that are served through it."""

    def __init__(
        self,
        db: aiosqlite.Connection,
        ledger: ReceiptStore,
        policy: DeliveryPolicy | None = None,
        clock: Clock | None = None,
    ) -> None:
        self._store = OutboxStore(db)
        self._ledger = ledger
        self._policy = policy or DeliveryPolicy()
        self._clock = clock or SystemClock()
        self._channels: dict[str, Channel] = {}
        self._on_delivered: dict[str, OnDelivered] = {}
        self._lanes: dict[tuple[str, str], _Lane] = {}
        self._queued: dict[int, OutboxRow] = {}
        self._waiters: dict[int, asyncio.Future[Outcome]] = {}
        self._buckets: dict[tuple[str, str], TokenBucket] = {}
        self._stopped: set[str] = set()

    @property
    def store(self) -> OutboxStore:
        """The table behind the outbox."""
        return self._store

    async def setup(self) -> None:
        """Create the table and prune old rows."""
        await self._store.setup()
        await self._store.prune(self._policy.keep_days * 86400)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        for name in list(self._channels):
            await self.stop(name)

    def serve(self, channel: Channel, on_delivered: OnDelivered) -> None:
        """Deliver this channel's cards through the outbox."""
        self._channels[channel.name] = channel
        self._on_delivered[channel.name] = on_delivered
        self._stopped.discard(channel.name)

    async def resume(self, channel: str) -> int:
        """Re-learn recent deliveries and restart undelivered rows; returns how many."""
        remember = self._on_delivered[channel]
        for correlation_id, ref in await self._store.recent_deliveries(
            channel, REMEMBERED_ON_RESUME
        ):
            remember(correlation_id, ref)
        rows = await self._store.pending(channel)
        for row in rows:
            self._enqueue(row)
        if rows:
            log.info("outbox: resuming %d undelivered card(s) on %s", len(rows), channel)
        return len(rows)

    async def stop(self, channel: str) -> None:
        """Stop delivering on a channel; undelivered rows stay for the next start."""
        self._stopped.add(channel)
        lanes = [lane for key, lane in self._lanes.items() if key[0] == channel]
        for lane in lanes:
            if lane.task is not None:
                lane.task.cancel()
        for lane in lanes:
            if lane.task is not None:
                with contextlib.suppress(asyncio.CancelledError):
                    await lane.task

    async def send(
        self, channel: str, chat_id: str, card: Card, *, key: str | None = None
    ) -> MessageRef:
        """Queue a card durably, then wait for its first delivery attempt.

        Returns the message standing for the card. Raises DeliveryDeferred when the first
        attempt failed but the card stays queued, DeliveryFailed when it never will go.
        """
        target = self._served(channel)
        parts = target.parts(card) if isinstance(target, PartedChannel) else 1
        row = OutboxRow(
            id=0,
            key=key or f"send:{channel}:{chat_id}:{card.correlation_id}",
            channel=channel,
            chat_id=chat_id,
            kind=DeliveryKind.SEND,
            card=card,
            parts=max(1, parts),
        )
        outcome = await self._submit(row)
        if isinstance(outcome, LancelotError):
            raise outcome
        return outcome

    async def edit(self, ref: MessageRef, card: Card) -> None:
        """Queue an edit of a delivered message, then wait for its first attempt (as send)."""
        self._served(ref.channel)
        outcome = await self._submit(self._edit_row(ref, card))
        if isinstance(outcome, LancelotError):
            raise outcome

    async def revise(self, channel: str, correlation_id: str, card: Card) -> int:
        """Give queued copies of a card its new content; returns how many.

        A copy not yet started goes out with the new content; one already on its way (or
        partly sent) is edited to it as soon as it has landed.
        """
        target = self._channels.get(channel)
        rows = [
            row
            for row in self._queued.values()
            if row.channel == channel
            and row.kind is DeliveryKind.SEND
            and row.card.correlation_id == correlation_id
        ]
        if target is None or not rows:
            return 0
        fresh = [row for row in rows if not row.message_ids and not row.in_flight]
        for row in rows:
            if row not in fresh:
                row.revision = card
        if fresh:
            parts = target.parts(card) if isinstance(target, PartedChannel) else 1
            await self._store.revise(fresh, card, max(1, parts))
        return len(rows)

    @staticmethod
    def _edit_row(ref: MessageRef, card: Card) -> OutboxRow:
        digest = hashlib.sha256(card_to_json(card).encode()).hexdigest()[:24]
        return OutboxRow(
            id=0,
            key=f"edit:{ref.channel}:{ref.chat_id}:{ref.message_id}:{digest}",
            channel=ref.channel,
            chat_id=ref.chat_id,
            kind=DeliveryKind.EDIT,
            card=card,
            target_id=ref.message_id,
        )

    def _served(self, channel: str) -> Channel:
        target = self._channels.get(channel)
        if target is None:
            raise DeliveryFailed(f"no channel named {channel!r} is served by the outbox")
        return target

    async def _submit(self, row: OutboxRow) -> Outcome:
        stored, _ = await self._store.add(row)
        if stored.state is OutboxState.DELIVERED and stored.ref is not None:
            return stored.ref
        if stored.state is OutboxState.FAILED:
            return DeliveryFailed("this card could not be delivered before")
        if stored.channel in self._stopped:
            return DeliveryDeferred("queued; delivery resumes at the next start")
        future = self._waiters.get(stored.id)
        if future is None:
            future = asyncio.get_running_loop().create_future()
            self._waiters[stored.id] = future
        self._enqueue(stored)
        try:
            async with asyncio.timeout(self._policy.first_attempt_wait):
                return await asyncio.shield(future)
        except TimeoutError:
            return DeliveryDeferred("still queued for delivery")

    def _enqueue(self, row: OutboxRow) -> None:
        if row.id in self._queued or row.channel not in self._channels:
            return
        if row.channel in self._stopped:
            return
        self._queued[row.id] = row
        lane = self._lanes.get(row.lane)
        if lane is None:
            lane = _Lane()
            self._lanes[row.lane] = lane
            lane.task = asyncio.create_task(self._run_lane(row.lane, lane), name="outbox-lane")
        lane.rows.append(row)

    async def _run_lane(self, key: tuple[str, str], lane: _Lane) -> None:
        try:
            while lane.rows:
                row = lane.rows[0]
                await self._deliver(row)
                lane.rows.popleft()
                self._queued.pop(row.id, None)
        finally:
            if self._lanes.get(key) is lane:
                del self._lanes[key]
            for row in lane.rows:  # stopped early: they stay pending in the table
                self._queued.pop(row.id, None)
                row.in_flight = False
                self._settle(row, DeliveryDeferred("delivery stopped; the card stays queued"))
            self._forget_idle_buckets()

    async def _deliver(self, row: OutboxRow) -> None:
        channel = self._channels[row.channel]
        while row.state is OutboxState.PENDING:
            await self._bucket(row.lane).take()
            try:
                await self._attempt_to_the_end(channel, row)
            except RateLimited as exc:  # not a failure: wait as told (send() keeps waiting)
                log.info("outbox: %s asks to wait %.1f s", row.channel, exc.retry_after)
                await self._clock.sleep(exc.retry_after)
            except PermanentError as exc:
                await self._give_up(row, exc)
            except Exception as exc:  # transient, or a bug in a channel: retry either way
                if not isinstance(exc, TransientError):
                    log.exception("outbox: unexpected error delivering on %s", row.channel)
                await self._retry_later(row, exc)

    async def _attempt_to_the_end(self, channel: Channel, row: OutboxRow) -> None:
        """One attempt that a stop cannot cut in half: a message already on its way is given
        STOP_GRACE seconds to land and be recorded, so a restart never sends it again."""
        row.in_flight = True
        attempt = asyncio.ensure_future(self._attempt(channel, row))
        try:
            await asyncio.shield(attempt)
        except asyncio.CancelledError:
            await _let_finish(attempt, STOP_GRACE)
            raise
        finally:
            row.in_flight = False

    async def _attempt(self, channel: Channel, row: OutboxRow) -> None:
        if row.kind is DeliveryKind.EDIT:
            ref = MessageRef(row.channel, row.chat_id, row.target_id or "")
            await channel.edit(ref, row.card)
        elif isinstance(channel, PartedChannel):
            ref = await channel.deliver_part(row.chat_id, row.card, len(row.message_ids))
        else:
            ref = await channel.deliver(row.chat_id, row.card)
        await self._store.part_delivered(row, ref.message_id)
        if row.state is OutboxState.DELIVERED:
            anchor = row.ref or ref
            if row.kind is DeliveryKind.SEND:
                self._on_delivered[row.channel](row.card.correlation_id, anchor)
            self._settle(row, anchor)
            if row.revision is not None:
                edit, _ = await self._store.add(self._edit_row(anchor, row.revision))
                if edit.state is OutboxState.PENDING:
                    self._enqueue(edit)

    async def _retry_later(self, row: OutboxRow, exc: Exception) -> None:
        row.attempts += 1
        if row.attempts >= self._policy.max_attempts:
            await self._give_up(row, exc)
            return
        await self._store.attempt_failed(row, str(exc))
        self._settle(row, DeliveryDeferred(f"not delivered yet ({exc}); will retry"))
        delay = self._policy.backoff(row.attempts)
        log.info("outbox: %s to %s failed (%s); retry in %.1f s", row.kind, row.channel, exc, delay)
        await self._clock.sleep(delay)

    async def _give_up(self, row: OutboxRow, exc: Exception) -> None:
        await self._store.failed(row, str(exc))
        log.warning("outbox: gave up on a %s to %s: %s", row.kind, row.channel, exc)
        self._ledger.append(
            Receipt(
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
        )
        self._settle(row, DeliveryFailed(f"not delivered: {exc}"))

    def _settle(self, row: OutboxRow, outcome: Outcome) -> None:
        future = self._waiters.pop(row.id, None)
        if future is not None and not future.done():
            future.set_result(outcome)

    def _bucket(self, lane: tuple[str, str]) -> TokenBucket:
        bucket = self._buckets.get(lane)
        if bucket is None:
            policy = self._policy
            bucket = TokenBucket(policy.chat_rate, policy.chat_burst, self._clock)
            self._buckets[lane] = bucket
        return bucket

    def _forget_idle_buckets(self) -> None:
        if len(self._buckets) > MAX_IDLE_BUCKETS:
            for lane in [k for k, b in self._buckets.items() if b.idle and k not in self._lanes]:
                del self._buckets[lane]


async def _let_finish(task: asyncio.Future[None], grace: float) -> None:
    """Wait up to `grace` for a task the caller no longer waits for, then drop it quietly."""
    # The caller re-raises its own cancellation; here only the wait ends.
    with contextlib.suppress(Exception, asyncio.CancelledError):
        async with asyncio.timeout(grace):
            await asyncio.shield(task)
    task.cancel()
    if task.done() and not task.cancelled():
        task.exception()  # retrieved: no "exception was never retrieved" noise
