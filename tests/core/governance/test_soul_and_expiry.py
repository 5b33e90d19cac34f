"""The soul from chat (show, amend, activate) and approvals that expire or were interrupted."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from bot.app import Lancelot, assemble
from core.config import Settings
from core.events import ButtonPress, Card, CardKind, MessageRef
from core.governance.approvals import ApprovalState, ApprovalStore
from core.receipts.base import ReceiptQuery
from core.tools.action import ToolAction
from tests.fakes.channel import MemoryChannel
from tests.fakes.owner import CHAT, OWNER, say, tap
from tests.fakes.workspace import put


async def test_soul_amendment_from_chat(app: Lancelot) -> None:
    phone = MemoryChannel()
    await app.attach(phone)
    shown = await say(app, phone, "/soul")
    assert dict(shown.fields)["Version"] == "1"
    proposal = await say(app, phone, "/soul propose approval_rules: {timeout_minutes: 45}")
    assert "timeout_minutes: 45" in proposal.body
    approved = await tap(app, phone, proposal, "Approve")
    assert [b.label for b in approved.buttons] == ["Activate", "Reject"]
    activated = await tap(app, phone, approved, "Activate")
    assert activated.title == "Soul v2 is active"
    assert dict((await say(app, phone, "/soul")).fields)["Approval timeout"] == "45 min"


async def test_amendment_breaking_an_invariant_never_activates(app: Lancelot) -> None:
    phone = MemoryChannel()
    await app.attach(phone)
    change = "scheduling_boundaries:\n  allow_autonomous_irreversible: true"
    card = await say(app, phone, f"/soul propose {change}")
    assert card.title == "Amendment rejected by the linter"
    assert "no-autonomous-irreversible" in card.body
    assert dict((await say(app, phone, "/soul")).fields)["Version"] == "1"


@pytest.mark.parametrize(
    "change", ["version: 7", "approval_rules: {timeout_minutes: 30}", "mission: |-\n  {mission}"]
)
async def test_a_proposal_that_changes_nothing_asks_for_no_approval(
    app: Lancelot, change: str
) -> None:
    phone = MemoryChannel()
    await app.attach(phone)
    soul = await say(app, phone, "/soul")  # v1: a 30 minute approval timeout
    assert dict(soul.fields)["Approval timeout"] == "30 min"
    mission = soul.body.split("\n\n")[0].replace("\n", "\n  ")
    card = await say(app, phone, f"/soul propose {change.replace('{mission}', mission)}")
    assert card.title == "No change"
    assert "soul v1 already says" in card.body
    assert not card.buttons
    assert dict((await say(app, phone, "/soul")).fields)["Amendments waiting"] == "0"


async def test_unanswered_approval_expires_and_its_card_says_so(app: Lancelot) -> None:
    phone = MemoryChannel()
    await app.attach(phone)
    put(app.home / "workspace" / "old" / "f.txt")
    put(app.home / "workspace" / "other")
    card = await say(app, phone, "/run rm -rf /workspace/old")
    store = ApprovalStore(app.state)
    [pending] = await store.in_states(ApprovalState.PENDING)
    # Bring the deadline forward instead of waiting 30 minutes; the expiry task wakes for it.
    await app.state.execute("UPDATE approvals SET expires_at = 0 WHERE id = ?", (pending.id,))
    await say(app, phone, "/run rm -rf /workspace/other")  # a new approval wakes the timer
    for _ in range(100):
        if (await store.get(pending.id)).state is ApprovalState.EXPIRED:  # type: ignore[union-attr]
            break
        await asyncio.sleep(0.05)
    assert any(
        c.title.startswith("Expired") and c.correlation_id == card.correlation_id
        for _, c in phone.edits
    )
    late = await tap(app, phone, card, "Approve")
    assert not late.title.startswith("Executed")


async def test_restart_finishes_approved_and_reports_interrupted(settings: Settings) -> None:
    async with assemble(settings, web=False) as first:
        phone = MemoryChannel()
        await first.attach(phone)
        put(first.home / "workspace" / "a" / "f.txt")
        put(first.home / "workspace" / "b")
        await say(first, phone, "/run rm -rf /workspace/a")
        await say(first, phone, "/run rm -rf /workspace/b")
        store = ApprovalStore(first.state)
        a, b = await store.in_states(ApprovalState.PENDING)
        # As if the process died right after the owner's tap, and in the middle of a run.
        await store.move(a.id, ApprovalState.PENDING, ApprovalState.APPROVED, decided_by="owner")
        await store.move(b.id, ApprovalState.PENDING, ApprovalState.EXECUTING)
    async with assemble(settings, web=False) as second:
        store = ApprovalStore(second.state)
        assert (await store.get(a.id)).state is ApprovalState.EXECUTED  # type: ignore[union-attr]
        assert (await store.get(b.id)).state is ApprovalState.INTERRUPTED  # type: ignore[union-attr]
        assert not (second.home / "workspace" / "a").exists()
        await second.ledger.flush()
        page = await second.ledger.page(ReceiptQuery(action_type="approval_interrupted"))
        assert len(page.receipts) == 1
        assert CardKind.APPROVAL  # outcome cards go out when a channel is attached


async def _wait_for(condition: Callable[[], bool]) -> None:
    for _ in range(200):
        if condition():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("condition never became true")


async def test_undecided_approval_is_reminded_once_and_the_reminder_decides(
    settings: Settings,
) -> None:
    async with assemble(settings, web=False) as app:
        phone = MemoryChannel()
        await app.attach(phone)
        put(app.home / "workspace" / "old" / "f.txt")
        put(app.home / "workspace" / "other")
        card = await say(app, phone, "/run rm -rf /workspace/old")
        store = ApprovalStore(app.state)
        [pending] = await store.in_states(ApprovalState.PENDING)
        # As if the request was made 21 minutes ago (the Soul reminds after 20, expires at 30).
        await app.state.execute(
            "UPDATE approvals SET created_at = created_at - 1260 WHERE id = ?", (pending.id,)
        )
        await say(app, phone, "/run rm -rf /workspace/other")  # wakes the timer

        def reminders() -> list[tuple[MessageRef, Card]]:
            return [(r, c) for r, c in phone.delivered if c.title.startswith("Reminder:")]

        await _wait_for(lambda: len(reminders()) == 1)
        [(ref, reminder)] = [
            (r, c) for r, c in reminders() if c.correlation_id == card.correlation_id
        ]
        assert reminder.title == "Reminder: approve these changes?"
        assert "rm -rf /workspace/old" in reminder.body
        await say(app, phone, "/status")  # another pass of the timer: still one reminder
        assert len(reminders()) == 1
        token = next(b.action_token for b in reminder.buttons if b.label == "Approve")
        await app.bus.publish(ButtonPress(phone.name, OWNER, CHAT, ref, token))
        await _wait_for(lambda: not (app.home / "workspace" / "old").exists())
        await app.drain()
        edited = {r for r, c in phone.edits if c.correlation_id == card.correlation_id}
        first = next(r for r, c in phone.delivered if c.correlation_id == card.correlation_id)
        assert {first, ref} <= edited  # both copies show the outcome
        page = await app.ledger.page(ReceiptQuery(action_type="approval_reminded"))
        [reminded] = page.receipts
        assert pending.id in str(reminded.inputs)
    async with assemble(settings, web=False) as again:  # a restart does not remind again
        phone = MemoryChannel()
        await again.attach(phone)
        await say(again, phone, "/status")
        assert not [c for _, c in phone.delivered if c.title.startswith("Reminder:")]


async def test_one_update_is_given_one_approval_whatever_asks_again(app: Lancelot) -> None:
    store = ApprovalStore(app.state)
    action = ToolAction("shell.exec", "rm -rf dir14")
    first = await store.create(action, "T3", "deletes", "card-1", "memory", 60, key="m:1")
    again = await store.create(action, "T3", "deletes", "card-2", "memory", 60, key="m:1")
    assert again == first  # the same approval, its card id included
    other = await store.create(action, "T3", "deletes", "card-3", "memory", 60, key="m:2")
    unkeyed = await store.create(action, "T3", "deletes", "card-4", "memory", 60)
    assert len({first.id, other.id, unkeyed.id}) == 3
    assert await store.count(ApprovalState.PENDING) == 3
    assert await store.requested("m:1") == first
    assert await store.requested("m:3") is None
