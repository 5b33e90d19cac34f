"""An approval's card on a real bus and store, with a phone of its own: the first copy, the
reminder, /approvals' copies, each kept so that a restarted Lancelot edits every one to
the outcome; buttons valid exactly as long as the approval; Undo on an applied change."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import aiosqlite
import pytest

from core.bus import Bus
from core.errors import InvalidToken
from core.governance.approval_delivery import ApprovalDelivery
from core.governance.approvals import Approval, ApprovalState, ApprovalStore
from core.governance.by_effect import APPLY
from core.governance.effect_followups import EffectFollowUps
from core.governance.undo import UndoDesk
from core.receipts.ledger import SqliteLedger
from core.security.owner_view import OwnerView
from core.security.tokens import ActionTokens
from core.state import open_state_db
from core.tools.action import ToolAction
from tests.core.governance.changes import NOW, Clock, Kept, Shelf, deleted
from tests.fakes.channel import MemoryChannel

TTL = 600.0


@dataclass
class Desk:
    """The delivery, its store and tokens, the phone, and what a restart needs."""

    delivery: ApprovalDelivery
    store: ApprovalStore
    tokens: ActionTokens
    phone: MemoryChannel
    clock: Clock
    followups: EffectFollowUps
    owner: OwnerView

    async def ask(self, command: str = "rm old.txt", capability: str = "shell.exec") -> Approval:
        action = ToolAction(capability, command, {"dry_run": "d1"})
        return await self.store.create(action, "T3", "deletes", f"card-{command}", "memory", TTL)

    def restarted(self, phone: MemoryChannel) -> ApprovalDelivery:
        """The delivery of a Lancelot started again: a new bus that has seen no card yet."""
        bus = Bus()
        bus.attach(phone)
        return ApprovalDelivery(
            self.store, self.tokens, bus, self.clock, self.followups, self.owner
        )

    async def decide(self, approval: Approval, state: ApprovalState) -> None:
        moved = await self.store.move(
            approval.id, ApprovalState.PENDING, state, decided_by="owner", decided_at=NOW,
            decided_via="memory", result="exit 0",
        )  # fmt: skip
        assert moved


@pytest.fixture
async def desk(tmp_path: Path) -> AsyncIterator[Desk]:
    clock = Clock()
    db: aiosqlite.Connection = await open_state_db(tmp_path / "state.db")
    store = ApprovalStore(db, clock)
    await store.setup()
    tokens = ActionTokens(db, b"test-secret-0123456789", clock=clock)
    await tokens.setup()
    phone, bus = MemoryChannel(), Bus()
    bus.attach(phone)
    owner = OwnerView("UTC", now=clock)
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        undo = UndoDesk(Shelf(deleted(1)), tokens, ledger, owner, clock)
        followups = EffectFollowUps(Kept(), undo, tokens)
        delivery = ApprovalDelivery(store, tokens, bus, clock, followups, owner)
        yield Desk(delivery, store, tokens, phone, clock, followups, owner)
    await db.close()


async def test_the_card_goes_out_and_its_buttons_decide_this_approval(desk: Desk) -> None:
    approval = await desk.ask()
    card = await desk.delivery.send_pending(approval)
    (ref, shown), = desk.phone.delivered  # fmt: skip
    assert shown == card
    assert (card.title, card.correlation_id) == ("Approve this?", approval.card_id)
    assert await desk.store.copies(approval.id) == [ref]
    assert [b.label for b in card.buttons] == ["Approve", "Deny"]
    grant = await desk.tokens.redeem(card.buttons[0].action_token, "owner", approval.card_id)
    approve = {"approval_id": approval.id, "choice": "approve", "hash": approval.action_hash}
    assert grant.payload == approve
    again = await desk.delivery.pending_card(approval)  # fresh tokens: the first tap spent all
    grant = await desk.tokens.redeem(again.buttons[1].action_token, "owner", approval.card_id)
    assert grant.payload == {**approve, "choice": "deny"}


async def test_the_buttons_lapse_with_the_approval(desk: Desk) -> None:
    approval = await desk.ask()
    for seconds_left, alive, dead in ((TTL, TTL - 0.5, TTL + 0.5), (0.25, 0.9, 1.5)):
        desk.clock.now = approval.expires_at - seconds_left
        card = await desk.delivery.pending_card(approval)
        token = card.buttons[0].action_token
        desk.clock.now = approval.expires_at - seconds_left + dead
        with pytest.raises(InvalidToken, match="expired"):
            await desk.tokens.redeem(token, "owner", approval.card_id)
        desk.clock.now = approval.expires_at - seconds_left + alive
        await desk.tokens.redeem(token, "owner", approval.card_id)


async def test_a_reminder_and_approvals_copies_are_kept_and_all_edited_after_a_restart(
    desk: Desk,
) -> None:
    approval = await desk.ask()
    other = await desk.ask("rm other.txt")
    await desk.delivery.send_pending(approval)
    await desk.delivery.send_reminder(approval)
    assert desk.phone.delivered[-1][1].title == "Reminder: approve this?"
    assert await desk.delivery.resend_pending("memory", "elsewhere") == 2
    assert [(r.chat_id, c.correlation_id) for r, c in desk.phone.delivered[-2:]] == [
        ("elsewhere", approval.card_id),
        ("elsewhere", other.card_id),
    ]
    refs = [r for r, c in desk.phone.delivered if c.correlation_id == approval.card_id]
    assert len(refs) == 3
    assert sorted(await desk.store.copies(approval.id), key=str) == sorted(refs, key=str)
    await desk.decide(approval, ApprovalState.DENIED)
    await desk.restarted(desk.phone).publish_outcome(approval.id)
    assert sorted((r for r, _ in desk.phone.edits), key=str) == sorted(refs, key=str)
    assert {c.title for _, c in desk.phone.edits} == {"Denied"}
    assert len(desk.phone.delivered) == 4  # edited, nothing sent anew


async def test_an_outcome_with_no_copy_known_goes_out_anew(desk: Desk) -> None:
    approval = await desk.ask()
    await desk.decide(approval, ApprovalState.EXECUTED)
    await desk.delivery.publish_outcome(approval.id)
    ((_, card),) = desk.phone.delivered
    assert (card.title, card.body) == (
        "Executed",
        "$ rm old.txt\nApproved by owner at 08:00 via memory.\nexit 0",
    )
    await desk.delivery.publish_outcome("no-such-approval")
    assert len(desk.phone.delivered) == 1
    assert await desk.delivery.resend_pending("memory", "owner-chat") == 0


async def test_an_applied_change_is_offered_undo_on_its_outcome(desk: Desk) -> None:
    approval = await desk.ask("rm old1.txt", APPLY)
    await desk.delivery.send_pending(approval)
    await desk.decide(approval, ApprovalState.EXECUTED)
    await desk.delivery.publish_outcome(approval.id)
    ((ref, card),) = desk.phone.edits
    assert ref == desk.phone.delivered[0][0]
    assert [b.label for b in card.buttons] == ["Undo"]
    bare = ApprovalDelivery(desk.store, desk.tokens, Bus(), desk.clock, None, desk.owner)
    executed = await desk.store.get(approval.id)
    assert executed is not None
    assert (await bare.outcome_card(executed)).buttons == ()  # no sandbox: nothing to undo
