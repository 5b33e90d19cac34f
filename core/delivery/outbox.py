"""The durable outbox: every card for a channel is a row in state.db until it is delivered.

Delivery runs in one lane per chat, in order, paced (a burst, then about one message a
second); a 429 waits its retry_after, other failures retry with capped exponential backoff,
and a permanent refusal or too many attempts marks the row failed, with a receipt. A part
counts as delivered only when the platform returned its message id, stored at once, so an
outage or a restart neither loses a card nor sends a part twice.

A card is on disk before its first attempt: its row goes into state.db's next group commit
(writer.py), shared with the writes of every other message in flight, so the fsync is paid
once per batch, not per card. Once send() has returned or raised DeliveryDeferred, the card
is on disk; a crash before that is a crash before the card was handed over (and before
anything was sent). One window no platform lets us close remains: a crash after the
platform accepted a message and before its delivered mark was committed sends that message
again on restart.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Self

import aiosqlite

from core.channel import Channel, is_group, parted
from core.clock import Clock, SystemClock
from core.delivery.lanes import Lanes
from core.delivery.outcomes import KEPT_OUTCOMES, Outcome, Outcomes
from core.delivery.pacing import ChannelPacing
from core.delivery.policy import DeliveryPolicy, failure_receipt, let_finish
from core.delivery.store import DeliveryKind, OutboxRow, OutboxState, OutboxStore
from core.delivery.writer import StateWriter, Write
from core.errors import (
    DeliveryDeferred,
    DeliveryFailed,
    LancelotError,
    PermanentError,
    RateLimited,
    TransientError,
)
from core.events import Card, MessageRef
from core.receipts.base import ReceiptStore
from core.runtime.tasks import Supervisor

__all__ = ["DeliveryPolicy", "OnDelivered", "Outbox", "Queued"]

log = logging.getLogger(__name__)

# Called when a card is fully delivered: (card correlation id, the message standing for it).
OnDelivered = Callable[[str, MessageRef], None]
# Awaited once a card is durably queued, before its first delivery attempt: whether the
# write sent along with it (send's `alongside`) was stored in the same transaction.
Queued = Callable[[bool], Awaitable[None]]

STOP_GRACE = 10.0  # seconds a stop waits for a message already on its way


class Outbox:
    """Durable, ordered, paced delivery for the channels served through it."""

    def __init__(
        self,
        db: aiosqlite.Connection,
        ledger: ReceiptStore,
        policy: DeliveryPolicy | None = None,
        clock: Clock | None = None,
        *,
        writer: StateWriter,
        tasks: Supervisor | None = None,
    ) -> None:
        self.store = OutboxStore(db, writer)
        self._supervisor = tasks or Supervisor()
        self._ledger = ledger
        self._policy = policy or DeliveryPolicy()
        self._clock = clock or SystemClock()
        self._channels: dict[str, Channel] = {}
        self._on_delivered: dict[str, OnDelivered] = {}
        self._stopped: set[str] = set()
        self._commits: dict[str, asyncio.Task[bool]] = {}  # by key, while being inserted
        self._outcomes = Outcomes()
        self._pacing = ChannelPacing(self._policy, self._clock)
        self._lanes = Lanes(
            self._deliver,
            tasks=self._supervisor,
            on_left=self._left_queued,
            on_idle=self._pacing.forget_idle,
        )

    async def setup(self) -> None:
        """Create the table and prune old rows."""
        await self.store.setup()
        await self.store.prune(self._policy.keep_days * 86400)

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
        for key, correlation_id, ref in await self.store.recent_deliveries(channel, KEPT_OUTCOMES):
            remember(correlation_id, ref)
            self._outcomes.keep(key, ref)
        # The channel is already serving: a card may have been queued, or even delivered,
        # while these rows were read. Such a row is this process's own, not one to resume.
        rows = [
            row
            for row in await self.store.pending(channel)
            if row.key not in self._outcomes and row.key not in self._lanes
        ]
        for row in rows:
            self._enqueue(row)
        if rows:
            log.info("outbox: resuming %d undelivered card(s) on %s", len(rows), channel)
        return len(rows)

    def retry_now(self, channel: str) -> None:
        """The channel answers again after an outage: cards waiting to retry go now."""
        self._pacing.retry_now(channel)

    async def stop(self, channel: str) -> None:
        """Stop delivering on a channel; undelivered rows stay for the next start."""
        self._stopped.add(channel)
        # What was handed over is stored before anything stops (inserts take milliseconds).
        await asyncio.gather(*self._commits.values(), return_exceptions=True)
        await self._lanes.cancel(channel)

    async def send(
        self,
        channel: str,
        chat_id: str,
        card: Card,
        *,
        key: str | None = None,
        alongside: Write | None = None,
        queued: Queued | None = None,
    ) -> MessageRef:
        """Queue a card durably and wait for its first delivery attempt.

        Returns the message standing for the card (its last part). Raises DeliveryDeferred
        when the first attempt failed but the card stays queued, DeliveryFailed when it will
        never go. The same key (by default: channel, chat and card id) is delivered once.
        `alongside` is stored in the same transaction as the card's row, when this call
        queues it. `queued` is awaited as soon as the card is on disk, before that first
        attempt (which an outage makes last up to `first_attempt_wait`), with whether
        `alongside` was stored with it.
        """
        target = self._served(channel)
        parts = target.parts(card) if parted(target) else 1
        row = OutboxRow(
            id=0,
            key=key or f"send:{channel}:{chat_id}:{card.correlation_id}",
            channel=channel,
            chat_id=chat_id,
            kind=DeliveryKind.SEND,
            card=card,
            parts=max(1, parts),
        )
        outcome = await self._submit(row, queued, alongside)
        if isinstance(outcome, LancelotError):
            raise outcome
        return outcome

    async def edit(self, ref: MessageRef, card: Card) -> None:
        """Queue an edit of a delivered message and wait for its first attempt (as send)."""
        self._served(ref.channel)
        outcome = await self._submit(OutboxRow.edit_of(ref, card))
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
            for row in self._lanes.rows()
            if row.channel == channel
            and row.kind is DeliveryKind.SEND
            and row.card.correlation_id == correlation_id
        ]
        if target is None or not rows:
            return 0
        fresh = [r for r in rows if r.id and not r.message_ids and not r.in_flight]
        for row in rows:
            if row not in fresh:
                row.revision = card
        if fresh:
            parts = target.parts(card) if parted(target) else 1
            await self.store.revise(fresh, card, max(1, parts))
        return len(rows)

    def _served(self, channel: str) -> Channel:
        target = self._channels.get(channel)
        if target is None:
            raise DeliveryFailed(f"no channel named {channel!r} is served by the outbox")
        return target

    async def _submit(
        self, row: OutboxRow, queued: Queued | None = None, alongside: Write | None = None
    ) -> Outcome:
        known = self._outcomes.final(row.key)
        if known is not None:
            if queued is not None:
                await queued(False)
            return known
        commit = None
        if row.key not in self._lanes:
            commit = self._commits[row.key] = asyncio.create_task(self._commit(row, alongside))
            if row.channel in self._stopped:
                stored = await self._commits.pop(row.key)
                if queued is not None:
                    await queued(stored)
                return DeliveryDeferred("queued; delivery resumes at the next start")
            self._enqueue(row)
        if queued is not None and commit is not None:
            await queued(await asyncio.shield(commit))
        elif queued is not None:  # queued by an earlier call with the same key
            await self._stored(row.key)
            await queued(False)
        return await self._outcomes.first_attempt(row.key, self._policy.first_attempt_wait)

    async def _stored(self, key: str) -> None:
        """Wait until the row with `key` is on disk (a commit still under way, if any)."""
        commit = self._commits.get(key)
        if commit is not None:
            await asyncio.shield(commit)

    async def _commit(self, row: OutboxRow, alongside: Write | None = None) -> bool:
        """Store the row (in the writer's next batch, shared with other messages' writes);
        whether `alongside` was stored with it."""
        return await self.store.add(row, alongside)

    async def _committed(self, row: OutboxRow) -> None:
        commit = self._commits.pop(row.key, None)
        if commit is None:
            return
        try:
            await commit
        except Exception:  # the database failed: deliver anyway, without the guarantee
            log.exception("outbox: could not store a %s for %s", row.kind, row.channel)

    def _enqueue(self, row: OutboxRow) -> None:
        if row.channel not in self._stopped:
            self._lanes.add(row)

    def _left_queued(self, row: OutboxRow) -> None:
        self._outcomes.settle(row.key, DeliveryDeferred("delivery stopped; the card stays queued"))

    async def _deliver(self, row: OutboxRow) -> None:
        channel = self._channels[row.channel]
        while row.state is OutboxState.PENDING:
            await self._pacing.take(row.lane, group=is_group(channel, row.chat_id))
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
            await let_finish(attempt, STOP_GRACE)
            raise
        finally:
            row.in_flight = False

    async def _attempt(self, channel: Channel, row: OutboxRow) -> None:
        await self._committed(row)  # stored before sent: a restart finds what may have gone
        ref = await self._show(channel, row)
        await self.store.part_delivered(row, ref.message_id)
        if row.state is OutboxState.DELIVERED:
            anchor = row.ref or ref
            if row.kind is DeliveryKind.SEND:
                self._on_delivered[row.channel](row.card.correlation_id, anchor)
            self._outcomes.finish(row.key, anchor)
            if row.revision is not None:
                self._queue_revision(anchor, row.revision)

    async def _show(self, channel: Channel, row: OutboxRow) -> MessageRef:
        if row.kind is DeliveryKind.EDIT:
            ref = MessageRef(row.channel, row.chat_id, row.target_id or "")
            await channel.edit(ref, row.card)
            return ref
        if parted(channel):
            return await channel.deliver_part(row.chat_id, row.card, len(row.message_ids))
        return await channel.deliver(row.chat_id, row.card)

    def _queue_revision(self, ref: MessageRef, card: Card) -> None:
        edit = OutboxRow.edit_of(ref, card)
        if edit.key not in self._outcomes and edit.key not in self._lanes:
            self._commits[edit.key] = asyncio.create_task(self._commit(edit))
            self._enqueue(edit)

    async def _retry_later(self, row: OutboxRow, exc: Exception) -> None:
        row.attempts += 1
        if row.attempts >= self._policy.max_attempts:
            await self._give_up(row, exc)
            return
        await self.store.attempt_failed(row, str(exc))
        self._outcomes.settle(row.key, DeliveryDeferred(f"not delivered yet ({exc}); will retry"))
        delay = self._policy.backoff(row.attempts)
        log.info("outbox: %s to %s failed (%s); retry in %.1f s", row.kind, row.channel, exc, delay)
        await self._pacing.wait_to_retry(row.channel, delay)

    async def _give_up(self, row: OutboxRow, exc: Exception) -> None:
        await self.store.failed(row, str(exc))
        log.warning("outbox: gave up on a %s to %s: %s", row.kind, row.channel, exc)
        self._ledger.append(failure_receipt(row, exc))
        self._outcomes.finish(row.key, DeliveryFailed(f"not delivered: {exc}"))
