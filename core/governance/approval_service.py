"""The approval flow: a card with Approve and Deny, the owner's tap, exactly-once execution,
expiry, and reconciliation after a restart. Every request and decision is a receipt.

This module orchestrates the flow and its waiting; the cards on the bus are sent and kept
current by core/governance/approval_delivery.py, and each change of state with its receipt is
made by core/governance/approval_transitions.py."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Self

from core.bus import Bus
from core.clock import iso
from core.commands.registry import PressContext
from core.events import Card
from core.governance.approval_delivery import ApprovalDelivery
from core.governance.approval_transitions import ApprovalTransitions
from core.governance.approvals import Approval, ApprovalState, ApprovalStore
from core.governance.deadlines import Deadlines
from core.governance.effect_followups import EffectFollowUps
from core.governance.execution import Executor, RunReport
from core.governance.policy import Decision
from core.governance.settlement import Settlement, SettlementWaiters
from core.receipts.base import ReceiptStore
from core.receipts.model import ReceiptStatus
from core.receipts.registry import GovernanceReceipt
from core.runtime import stopping
from core.runtime.stopping import StopRequest, StopSwitch
from core.runtime.tasks import Supervisor
from core.security.owner_view import OwnerView
from core.security.tokens import ActionTokens
from core.tools.action import ToolAction

log = logging.getLogger(__name__)

SETTLED = (
    ApprovalState.EXECUTED,
    ApprovalState.NOT_RUN,
    ApprovalState.DENIED,
    ApprovalState.EXPIRED,
    ApprovalState.INTERRUPTED,
)


class ApprovalService:
    """Asks the owner, waits without blocking anything, and runs the approved action once."""

    def __init__(
        self,
        store: ApprovalStore,
        tokens: ActionTokens,
        bus: Bus,
        ledger: ReceiptStore,
        executor: Executor,
        timeout: Callable[[], float],
        clock: Callable[[], float] = time.time,
        remind_after: Callable[[], float | None] = lambda: None,
        *,
        owner: OwnerView,
        tasks: Supervisor | None = None,
        effects: EffectFollowUps | None = None,
    ) -> None:
        """`timeout` and `remind_after` (seconds after the request; None: no reminder) are
        read at each use, so a newly activated Soul applies at once. `owner`: whose name and
        time the cards show. `effects` adds Undo, Dry run again, and dropping a denied dry
        run."""
        self._store = store
        self._clock = clock
        self._delivery = ApprovalDelivery(store, tokens, bus, clock, effects, owner)
        self._transitions = ApprovalTransitions(store, ledger, executor, timeout, clock, effects)
        self._waiters = SettlementWaiters()
        self._stoppable: dict[str, StopSwitch] = {}  # approval id -> its waiting task's stop
        self._supervisor = tasks or Supervisor()
        self._deadlines = Deadlines(
            store,
            clock,
            remind_after,
            expire=self._expire,
            remind=self._remind,
            tasks=self._supervisor,
        )
        self._unwaited: list[Callable[[Approval, RunReport], Awaitable[None]]] = []

    async def __aenter__(self) -> Self:
        await self.reconcile()
        self._deadlines.start()
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self._deadlines.stop()

    async def request(
        self,
        action: ToolAction,
        decision: Decision,
        via: str,
        quest_id: str | None = None,
        *,
        key: str | None = None,
    ) -> str:
        """Create the approval, send its card to the owner everywhere; return its id.
        `key`: the inbound update asking; asked again (a replay after a crash), it gets
        the approval made the first time (see asked)."""
        known = await self.asked(key) if key is not None else None
        if known is not None:
            return known
        approval = await self._transitions.create(action, decision, via, quest_id, key)
        await self._send_pending(approval)
        return approval.id

    async def asked(self, key: str) -> str | None:
        """The approval the inbound update `key` already asked for, if any; still pending,
        its card is sent again (the outbox delivers a card once, so only a card a crash
        kept from going out goes now)."""
        approval = await self._store.requested(key)
        if approval is None:
            return None
        if approval.state is ApprovalState.PENDING:
            await self._send_pending(approval)
        return approval.id

    async def request_and_wait(
        self,
        action: ToolAction,
        decision: Decision,
        via: str,
        quest_id: str | None = None,
        asked: Callable[[str], Awaitable[None]] | None = None,
        *,
        key: str | None = None,
    ) -> Settlement:
        """Ask the owner as request() does, then wait (only this caller) until the approval
        is executed, denied, expired or interrupted. The decision may come from any copy.
        `asked` hears the approval's id before its card goes out (to note what waits on it:
        a stop at any instant after the owner could see the card leaves that note behind).
        `key`: the update and step asking; asked again after a restart, the approval made
        the first time is waited on (see wait_again)."""
        approval = await self._transitions.create(action, decision, via, quest_id, key)
        return await self._wait(approval, asked)

    async def wait_again(
        self, key: str, asked: Callable[[str], Awaitable[None]] | None = None
    ) -> Settlement | None:
        """The approval the update and step `key` asked for before (a restart redid the
        update), waited on again: its card goes out only if a crash kept it from going out;
        one settled meanwhile is returned as it is (what it ran does not run again). None
        when `key` asked for nothing yet."""
        approval = await self._store.requested(key)
        return await self._wait(approval, asked) if approval is not None else None

    async def _wait(
        self, approval: Approval, asked: Callable[[str], Awaitable[None]] | None
    ) -> Settlement:
        """Wait for `approval` to settle, sending its card first while it is pending."""
        # Listen before the card goes out, so even the fastest tap is not lost.
        waiter = self._waiters.watch(approval.id)
        switch = stopping.current()  # the owner may stop the task that waits
        if switch is not None:
            self._stoppable[approval.id] = switch
        try:
            current = await self._store.get(approval.id) or approval  # listening now
            if current.state in SETTLED:
                return Settlement(current)
            if asked is not None:
                await asked(approval.id)
            if current.state is ApprovalState.PENDING:
                await self._send_pending(current)
            return await waiter
        except asyncio.CancelledError:
            if switch is not None and switch.request is not None:  # stopped, not shut down
                await self._withdraw(approval, switch.request)
            raise
        finally:
            self._waiters.unwatch(approval.id, waiter)
            self._stoppable.pop(approval.id, None)

    def when_unwaited(self, listener: Callable[[Approval, RunReport], Awaitable[None]]) -> None:
        """Be told of an approved action that ran with nobody waiting for it (whoever asked
        was stopped by a restart): the agent picks its task up again."""
        self._unwaited.append(listener)

    async def _settle(self, approval_id: str, report: RunReport | None = None) -> None:
        """Wake whoever waits for this approval with its final state (and what ran)."""
        if not self._waiters.wanted(approval_id):
            approval = await self._store.get(approval_id)
            if report is not None and approval is not None:
                for listener in self._unwaited:
                    await listener(approval, report)
            return
        approval = await self._store.get(approval_id)
        if approval is not None:
            self._waiters.settle(Settlement(approval, report))

    async def _send_pending(self, approval: Approval) -> Card:
        card = await self._delivery.send_pending(approval)
        self._deadlines.poke()
        return card

    async def _remind(self, approval: Approval) -> None:
        """Send one fresh copy of a card still undecided; its buttons work like the first's."""
        if not await self._store.claim_reminder(approval.id):
            return
        await self._delivery.send_reminder(approval)
        self._transitions.record(
            approval,
            GovernanceReceipt.APPROVAL_REMINDED,
            f"still undecided; lapses at {iso(approval.expires_at)}",
            ReceiptStatus.PENDING,
            None,
        )

    async def resend_pending(self, channel: str, chat_id: str) -> int:
        """Send a fresh copy of every pending approval card to one chat (for /approvals).
        The first tap on any copy decides, and every copy is edited to the outcome."""
        return await self._delivery.resend_pending(channel, chat_id)

    async def on_press(self, ctx: PressContext) -> Card | None:
        """The Approve/Deny handler (the token was valid; the owner check was done)."""
        approval = await self._store.get(str(ctx.payload.get("approval_id")))
        if approval is None:
            return None
        if (
            approval.action.digest != ctx.payload.get("hash")
            or approval.action.digest != approval.action_hash
        ):
            self._transitions.record(
                approval,
                GovernanceReceipt.APPROVAL_REFUSED,
                "the action changed since the card was sent",
                ReceiptStatus.REFUSED,
                ctx.receipt_id,
            )
            return await self.outcome_card(approval, note="Refused: the action changed.")
        who, via = ctx.event.sender_id, ctx.event.channel
        now = self._clock()
        if now > approval.expires_at:
            await self._expire(approval)
            return None
        if ctx.payload.get("choice") == "deny":
            what = f"denied by {who} via {via}"
            if await self._transitions.deny(approval, now, who, via, what, ctx.receipt_id):
                await self._settle(approval.id)
        else:
            # A Stop of the task waiting for this approval waits until the change is applied.
            switch = self._stoppable.get(approval.id)
            with switch.hold() if switch is not None else contextlib.nullcontext():
                if await self._transitions.approve(approval, now, who, via, ctx.receipt_id):
                    await self._run(approval.id, ctx.receipt_id)
        fresh = await self._store.get(approval.id)
        return await self.outcome_card(fresh or approval)

    async def _run(self, approval_id: str, parent_id: str | None) -> None:
        """Run the approved action once and wake whoever waits for it."""
        report = await self._transitions.run(approval_id, parent_id)
        if report is not None:
            await self._settle(approval_id, report)

    async def outcome_card(self, approval: Approval, note: str = "") -> Card:
        """The card after a decision (core.governance.approval_cards), with Undo while an
        applied change can still be taken back."""
        return await self._delivery.outcome_card(approval, note)

    async def reconcile(self) -> None:
        """After a restart: re-attach delivered cards, expire the stale, finish the approved."""
        for approval in await self._store.in_states(ApprovalState.PENDING):
            await self._delivery.reattach(approval)
            if self._clock() > approval.expires_at:
                await self._expire(approval)
        for approval in await self._store.in_states(ApprovalState.APPROVED):
            log.info("running approval %s approved before the restart", approval.id)
            await self._run(approval.id, None)
            await self._delivery.publish_outcome(approval.id)
        for approval in await self._store.in_states(ApprovalState.EXECUTING):
            await self._transitions.interrupt(approval)
            await self._delivery.publish_outcome(approval.id)

    async def _withdraw(self, approval: Approval, stop: StopRequest) -> None:
        """The owner stopped the task waiting for this approval: it is no longer a question
        (denied, by the one who stopped it), so a later Approve cannot run it."""
        what = f"withdrawn: {stop.by} stopped the request via {stop.via}"
        if await self._transitions.deny(
            approval, stop.at, stop.by, f"Stop ({stop.via})", what, None
        ):
            await self._delivery.publish_outcome(approval.id)

    async def _expire(self, approval: Approval) -> None:
        if await self._transitions.expire(approval):
            await self._settle(approval.id)
            await self._delivery.publish_outcome(approval.id)
