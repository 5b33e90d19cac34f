"""An approval's card on the bus: its Approve and Deny buttons, the copies sent to every chat
(first send, reminder, /approvals), and every copy edited to the outcome."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from core.bus import Bus
from core.events import Button, Card
from core.governance.approval_cards import outcome_card, pending_card
from core.governance.approvals import Approval, ApprovalState, ApprovalStore
from core.governance.effect_followups import EffectFollowUps
from core.security.owner_view import OwnerView
from core.security.tokens import ActionTokens

DECIDE = "approval.decide"


class ApprovalDelivery:
    """Sends an approval's card and keeps each copy of it (kept in the store) current."""

    def __init__(
        self,
        store: ApprovalStore,
        tokens: ActionTokens,
        bus: Bus,
        clock: Callable[[], float],
        effects: EffectFollowUps | None,
        owner: OwnerView,
    ) -> None:
        self._store = store
        self._owner = owner  # the cards' times and names
        self._tokens = tokens
        self._bus = bus
        self._clock = clock
        self._effects = effects  # Undo and Dry run again on the outcome card

    async def send_pending(self, approval: Approval) -> Card:
        """Broadcast the pending card and keep where each copy went."""
        card = await self.pending_card(approval)
        for ref in await self._bus.broadcast(card):
            await self._store.add_copy(approval.id, ref)
        return card

    async def send_reminder(self, approval: Approval) -> None:
        """One fresh copy of a card still undecided; its buttons work like the first's."""
        card = await self.pending_card(approval)
        card = replace(card, title=f"Reminder: {card.title[0].lower()}{card.title[1:]}")
        for ref in await self._bus.broadcast(card, key=f"reminder:{approval.id}"):
            await self._store.add_copy(approval.id, ref)

    async def pending_card(self, approval: Approval) -> Card:
        """The pending card with Approve and Deny tokens valid until the approval lapses."""
        ttl = max(approval.expires_at - self._clock(), 1.0)
        buttons = []
        for label, choice in (("Approve", "approve"), ("Deny", "deny")):
            payload = {"approval_id": approval.id, "choice": choice, "hash": approval.action_hash}
            token = await self._tokens.issue(DECIDE, payload, approval.card_id, ttl=ttl)
            buttons.append(Button(label, token))
        return pending_card(approval, tuple(buttons), self._owner, self._clock())

    async def resend_pending(self, channel: str, chat_id: str) -> int:
        """Send a fresh copy of every pending approval card to one chat (for /approvals).
        The first tap on any copy decides, and every copy is edited to the outcome."""
        pending = await self._store.in_states(ApprovalState.PENDING)
        for approval in pending:
            card = await self.pending_card(approval)
            key = f"resend:{approval.id}:{self._clock():.3f}"  # a fresh copy, not a dedup
            ref = await self._bus.send(channel, chat_id, card, key=key)
            await self._store.add_copy(approval.id, ref)
        return len(pending)

    async def outcome_card(self, approval: Approval, note: str = "") -> Card:
        """The card after a decision (core.governance.approval_cards), with Undo while an
        applied change can still be taken back."""
        buttons: tuple[Button, ...] = ()
        title = None
        if self._effects is not None:
            buttons, title = await self._effects.outcome_buttons(approval)
        return outcome_card(approval, self._clock(), self._owner, note, buttons, title=title)

    async def reattach(self, approval: Approval) -> None:
        """After a restart: tell the bus again which messages show this approval's card."""
        for ref in await self._store.copies(approval.id):
            self._bus.remember(approval.card_id, ref)

    async def publish_outcome(self, approval_id: str) -> None:
        """Edit every copy of the card to the approval's outcome (broadcast it if none was
        edited)."""
        approval = await self._store.get(approval_id)
        if approval is None:
            return
        await self.reattach(approval)
        card = await self.outcome_card(approval)
        if not await self._bus.update(approval.card_id, card):
            await self._bus.broadcast(card)
