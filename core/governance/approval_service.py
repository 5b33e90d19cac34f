"""The approval flow: a card with Approve and Deny, the owner's tap, exactly-once execution,
expiry, and reconciliation after a restart. Every request and decision is a receipt."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from types import TracebackType
from typing import Self

from core.bus import Bus
from core.commands.registry import PressContext
from core.events import Button, Card
from core.governance.approval_cards import clock_text, outcome_card, pending_card
from core.governance.approvals import Approval, ApprovalState, ApprovalStore
from core.governance.deadlines import Deadlines
from core.governance.effect_followups import EffectFollowUps
from core.governance.execution import Executor, RunReport
from core.governance.kinds import GovernanceReceipt
from core.governance.policy import Decision
from core.governance.settlement import Settlement, SettlementWaiters
from core.receipts.base import ReceiptStore
from core.receipts.model import Receipt, ReceiptStatus
from core.runtime import stopping
from core.runtime.stopping import StopRequest, StopSwitch
from core.runtime.tasks import Supervisor
from core.security.tokens import ActionTokens
from core.tools.action import ToolAction

log = logging.getLogger(__name__)

DECIDE = "approval.decide"


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
        tasks: Supervisor | None = None,
        effects: EffectFollowUps | None = None,
    ) -> None:
        """`timeout` and `remind_after` (seconds after the request; None: no reminder) are
        read at each use, so a newly activated Soul applies at once."""
        self._store = store
        self._tokens = tokens
        self._bus = bus
        self._ledger = ledger
        self._executor = executor
        self._timeout = timeout
        self._clock = clock
        self._remind_after = remind_after
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
        self._effects = effects  # Undo, Dry run again, and dropping a denied dry run

    async def __aenter__(self) -> Self:
        await self.reconcile()
        self._deadlines.start()
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self._deadlines.stop()

    async def request(
        self, action: ToolAction, decision: Decision, via: str, quest_id: str | None = None
    ) -> str:
        """Create the approval, send its card to the owner everywhere; return its id."""
        approval = await self._create(action, decision, via, quest_id)
        await self._send_pending(approval)
        return approval.id

    async def request_and_wait(
        self,
        action: ToolAction,
        decision: Decision,
        via: str,
        quest_id: str | None = None,
        asked: Callable[[str], Awaitable[None]] | None = None,
    ) -> Settlement:
        """Ask the owner as request() does, then wait (only this caller) until the approval
        is executed, denied, expired or interrupted. The decision may come from any copy.
        `asked` hears the approval's id before its card goes out (to note what waits on it:
        a stop at any instant after the owner could see the card leaves that note behind)."""
        approval = await self._create(action, decision, via, quest_id)
        # Listen before the card goes out, so even the fastest tap is not lost.
        waiter = self._waiters.watch(approval.id)
        switch = stopping.current()  # the owner may stop the task that waits
        if switch is not None:
            self._stoppable[approval.id] = switch
        try:
            if asked is not None:
                await asked(approval.id)
            await self._send_pending(approval)
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

    async def _create(
        self, action: ToolAction, decision: Decision, via: str, quest_id: str | None
    ) -> Approval:
        card_id = f"approval-{action.digest[:12]}-{int(self._clock() * 1000)}"
        approval = await self._store.create(
            action, decision.tier, decision.reason, card_id, via, self._timeout(), quest_id
        )
        await self._ledger.append_durable(
            Receipt(
                action_type=GovernanceReceipt.APPROVAL_REQUESTED,
                action_name=action.capability,
                inputs={"command": action.describe(), "action_hash": action.digest},
                outputs={"approval_id": approval.id, "expires_at": approval.expires_at},
                status=ReceiptStatus.PENDING,
                quest_id=quest_id,
                metadata={"policy": decision.snapshot(), "via": via},
            )
        )
        return approval

    async def _send_pending(self, approval: Approval) -> Card:
        card = await self._pending_card(approval)
        for ref in await self._bus.broadcast(card):
            await self._store.add_copy(approval.id, ref)
        self._deadlines.poke()
        return card

    async def _remind(self, approval: Approval) -> None:
        """Send one fresh copy of a card still undecided; its buttons work like the first's."""
        if not await self._store.claim_reminder(approval.id):
            return
        card = await self._pending_card(approval)
        card = replace(card, title=f"Reminder: {card.title[0].lower()}{card.title[1:]}")
        for ref in await self._bus.broadcast(card, key=f"reminder:{approval.id}"):
            await self._store.add_copy(approval.id, ref)
        self._record(
            approval,
            GovernanceReceipt.APPROVAL_REMINDED,
            f"still undecided; lapses at {clock_text(approval.expires_at)}",
            ReceiptStatus.PENDING,
            None,
        )

    async def _pending_card(self, approval: Approval) -> Card:
        ttl = max(approval.expires_at - self._clock(), 1.0)
        buttons = []
        for label, choice in (("Approve", "approve"), ("Deny", "deny")):
            payload = {"approval_id": approval.id, "choice": choice, "hash": approval.action_hash}
            token = await self._tokens.issue(DECIDE, payload, approval.card_id, ttl=ttl)
            buttons.append(Button(label, token))
        return pending_card(approval, tuple(buttons))

    async def resend_pending(self, channel: str, chat_id: str) -> int:
        """Send a fresh copy of every pending approval card to one chat (for /approvals).
        The first tap on any copy decides, and every copy is edited to the outcome."""
        pending = await self._store.in_states(ApprovalState.PENDING)
        for approval in pending:
            card = await self._pending_card(approval)
            key = f"resend:{approval.id}:{self._clock():.3f}"  # a fresh copy, not a dedup
            ref = await self._bus.send(channel, chat_id, card, key=key)
            await self._store.add_copy(approval.id, ref)
        return len(pending)

    async def on_press(self, ctx: PressContext) -> Card | None:
        """The Approve/Deny handler (the token was valid; the owner check was done)."""
        approval = await self._store.get(str(ctx.payload.get("approval_id")))
        if approval is None:
            return None
        if (
            approval.action.digest != ctx.payload.get("hash")
            or approval.action.digest != approval.action_hash
        ):
            self._record(
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
            if await self._store.move(
                approval.id,
                ApprovalState.PENDING,
                ApprovalState.DENIED,
                decided_at=now,
                decided_by=who,
                decided_via=via,
            ):
                self._record(
                    approval,
                    GovernanceReceipt.APPROVAL_DENIED,
                    f"denied by {who} via {via}",
                    ReceiptStatus.SUCCESS,
                    ctx.receipt_id,
                )
                await self._drop(approval)
                await self._settle(approval.id)
        else:
            # A Stop of the task waiting for this approval waits until the change is applied.
            switch = self._stoppable.get(approval.id)
            with switch.hold() if switch is not None else contextlib.nullcontext():
                if await self._store.move(
                    approval.id,
                    ApprovalState.PENDING,
                    ApprovalState.APPROVED,
                    decided_at=now,
                    decided_by=who,
                    decided_via=via,
                ):
                    self._record(
                        approval,
                        GovernanceReceipt.APPROVAL_GRANTED,
                        f"approved by {who} via {via}",
                        ReceiptStatus.SUCCESS,
                        ctx.receipt_id,
                    )
                    await self._run(approval.id, ctx.receipt_id)
        fresh = await self._store.get(approval.id)
        return await self.outcome_card(fresh or approval)

    async def _run(self, approval_id: str, parent_id: str | None) -> None:
        """Approved -> executing (durably) -> executed, or not_run when nothing could start
        it (no provider, refused at run time, an earlier step undone). Never starts twice."""
        if not await self._store.move(approval_id, ApprovalState.APPROVED, ApprovalState.EXECUTING):
            return
        approval = await self._store.get(approval_id)
        assert approval is not None
        report = await self._executor.execute(
            approval.action,
            approval.tier,
            parent_id=parent_id,
            quest_id=approval.quest_id,
            approval_id=approval.id,
            policy={
                "verdict": "needs_approval",
                "tier": approval.tier,
                "reason": approval.reason,
                "approved_by": approval.decided_by,
                "approved_via": approval.decided_via,
            },
        )
        await self._store.move(
            approval_id,
            ApprovalState.EXECUTING,
            ApprovalState.EXECUTED if report.result is not None else ApprovalState.NOT_RUN,
            finished_at=self._clock(),
            result=report.text,
        )
        await self._settle(approval_id, report)

    async def outcome_card(self, approval: Approval, note: str = "") -> Card:
        """The card after a decision (core.governance.approval_cards), with Undo while an
        applied change can still be taken back."""
        buttons: tuple[Button, ...] = ()
        title = None
        if self._effects is not None:
            buttons, title = await self._effects.outcome_buttons(approval)
        return outcome_card(approval, self._clock(), note, buttons, title=title)

    async def reconcile(self) -> None:
        """After a restart: re-attach delivered cards, expire the stale, finish the approved."""
        for approval in await self._store.in_states(ApprovalState.PENDING):
            for ref in await self._store.copies(approval.id):
                self._bus.remember(approval.card_id, ref)
            if self._clock() > approval.expires_at:
                await self._expire(approval)
        for approval in await self._store.in_states(ApprovalState.APPROVED):
            log.info("running approval %s approved before the restart", approval.id)
            await self._run(approval.id, None)
            await self._publish_outcome(approval.id)
        for approval in await self._store.in_states(ApprovalState.EXECUTING):
            await self._store.move(
                approval.id,
                ApprovalState.EXECUTING,
                ApprovalState.INTERRUPTED,
                finished_at=self._clock(),
            )
            self._record(
                approval,
                GovernanceReceipt.APPROVAL_INTERRUPTED,
                "was running when Lancelot stopped; not run again",
                ReceiptStatus.FAILURE,
                None,
            )
            await self._publish_outcome(approval.id)

    async def _publish_outcome(self, approval_id: str) -> None:
        approval = await self._store.get(approval_id)
        if approval is None:
            return
        for ref in await self._store.copies(approval.id):
            self._bus.remember(approval.card_id, ref)
        card = await self.outcome_card(approval)
        if not await self._bus.update(approval.card_id, card):
            await self._bus.broadcast(card)

    async def _withdraw(self, approval: Approval, stop: StopRequest) -> None:
        """The owner stopped the task waiting for this approval: it is no longer a question
        (denied, by the one who stopped it), so a later Approve cannot run it."""
        if await self._store.move(
            approval.id,
            ApprovalState.PENDING,
            ApprovalState.DENIED,
            decided_at=stop.at,
            decided_by=stop.by,
            decided_via=f"Stop ({stop.via})",
        ):
            self._record(
                approval,
                GovernanceReceipt.APPROVAL_DENIED,
                f"withdrawn: {stop.by} stopped the request via {stop.via}",
                ReceiptStatus.SUCCESS,
                None,
            )
            await self._drop(approval)
            await self._publish_outcome(approval.id)

    async def _drop(self, approval: Approval) -> None:
        """Denied or lapsed: a dry run kept for this approval is discarded (the workspace
        never saw it)."""
        if self._effects is not None and await self._effects.drop(approval):
            self._record(
                approval,
                GovernanceReceipt.DRY_RUN_DISCARDED,
                "its changes were not applied",
                ReceiptStatus.SUCCESS,
                None,
            )

    async def _expire(self, approval: Approval) -> None:
        if await self._store.move(
            approval.id, ApprovalState.PENDING, ApprovalState.EXPIRED, decided_at=self._clock()
        ):
            self._record(
                approval,
                GovernanceReceipt.APPROVAL_EXPIRED,
                "no decision before the deadline",
                ReceiptStatus.SKIPPED,
                None,
            )
            await self._drop(approval)
            await self._settle(approval.id)
            await self._publish_outcome(approval.id)

    def _record(
        self, approval: Approval, kind: str, what: str, status: ReceiptStatus, parent_id: str | None
    ) -> None:
        self._ledger.append(
            Receipt(
                action_type=kind,
                action_name=approval.action.capability,
                inputs={"approval_id": approval.id, "command": approval.action.describe()},
                outputs={"outcome": what},
                status=status,
                parent_id=parent_id,
                quest_id=approval.quest_id,
            )
        )
