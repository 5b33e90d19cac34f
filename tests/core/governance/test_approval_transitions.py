"""An approval's moves, each alone, as the store and the ledger keep them: every move happens
once (a move that lost a race answers False and records nothing), its receipt says who,
what and when, and a run carries the approval's decision into the tool's own receipt."""

from __future__ import annotations

from typing import Any

from bot.app import Lancelot
from core.events import CardKind
from core.governance.approval_transitions import ApprovalTransitions
from core.governance.approvals import Approval, ApprovalState
from core.governance.execution import Executor
from core.governance.policy import Decision, Verdict
from core.receipts.base import ReceiptQuery
from core.receipts.model import ReceiptStatus, StoredReceipt
from core.tools.action import ToolAction
from tests.core.governance.service_rig import HandClock, deleting, store_of
from tests.fakes.channel import MemoryChannel
from tests.fakes.owner import say, tap
from tests.fakes.workspace import put

NOW = 1234.5  # the transitions' clock: card ids, expiries and finishes are stamped with it
QUEST = "quest-7"


def transitions_on(app: Lancelot, clock: HandClock) -> ApprovalTransitions:
    """Transitions over the app's store, ledger and tools (no dry runs kept), a 60-second
    deadline, timed by `clock`."""
    kit = app.governance
    assert kit is not None
    executor = Executor(kit.policy, kit.tools, app.ledger)
    return ApprovalTransitions(store_of(app), app.ledger, executor, lambda: 60.0, clock, None)


async def receipts(app: Lancelot, action_type: str) -> list[StoredReceipt]:
    """The ledger's receipts of one kind, oldest first."""
    await app.ledger.flush()
    page = await app.ledger.page(ReceiptQuery(action_type=action_type, limit=100))
    return list(reversed(page.receipts))


async def asked(app: Lancelot, name: str) -> tuple[ApprovalTransitions, Approval, Decision]:
    """A pending approval to delete workspace file `name`, created through the transitions."""
    moves = transitions_on(app, HandClock(NOW))
    action, decision = deleting(app, name)
    approval = await moves.create(action, decision, "memory", QUEST)
    return moves, approval, decision


def outcome(receipt: StoredReceipt) -> Any:
    """What a move's receipt says happened."""
    return receipt.decoded("outputs")["outcome"]


async def test_a_request_is_durably_on_the_ledger_with_its_action_and_policy(
    app: Lancelot,
) -> None:
    moves = transitions_on(app, HandClock(NOW))
    action, decision = deleting(app, "a.txt")
    approval = await moves.create(action, decision, "memory", QUEST)
    # Durable: on the page without a flush, before anyone is asked.
    page = await app.ledger.page(ReceiptQuery(action_type="approval_requested", limit=5))
    [request] = page.receipts
    assert request.status == ReceiptStatus.PENDING
    assert request.action_name == "file.delete"
    assert request.quest_id == QUEST
    assert request.decoded("inputs") == {"command": action.describe(), "action_hash": action.digest}
    assert request.decoded("outputs") == {
        "approval_id": approval.id,
        "expires_at": approval.expires_at,
    }
    assert request.decoded("metadata") == {"policy": decision.snapshot(), "via": "memory"}
    stored = await store_of(app).get(approval.id)
    assert stored == approval
    assert stored.state is ApprovalState.PENDING
    assert stored.card_id == f"approval-{action.digest[:12]}-{int(NOW * 1000)}"
    assert stored.expires_at - stored.created_at == 60.0


async def test_a_denial_happens_once_and_says_who_denied(app: Lancelot) -> None:
    moves, approval, _ = await asked(app, "a.txt")
    assert await moves.deny(approval, NOW, "owner", "memory", "denied by owner", "tap-1") is True
    # A second tap, or an Approve that lost the race, moves nothing and records nothing.
    assert await moves.deny(approval, NOW, "owner", "memory", "again", "tap-2") is False
    assert await moves.approve(approval, NOW, "owner", "memory", "tap-3") is False
    [denied] = await receipts(app, "approval_denied")
    assert (outcome(denied), denied.parent_id, denied.quest_id) == (
        "denied by owner",
        "tap-1",
        QUEST,
    )
    assert denied.decoded("inputs") == {
        "approval_id": approval.id,
        "command": approval.action.describe(),
    }
    assert denied.status == ReceiptStatus.SUCCESS
    assert await receipts(app, "approval_granted") == []
    assert await receipts(app, "dry_run_discarded") == []  # it kept no dry run
    stored = await store_of(app).get(approval.id)
    assert stored is not None
    assert (stored.state, stored.decided_by, stored.decided_via) == (
        ApprovalState.DENIED,
        "owner",
        "memory",
    )
    assert (app.home / "workspace" / "a.txt").exists()


async def test_an_approved_run_starts_once_and_its_receipt_names_the_approval(
    app: Lancelot,
) -> None:
    moves, approval, decision = await asked(app, "a.txt")
    assert await moves.run(approval.id, None) is None  # not approved yet: nothing starts
    assert await moves.approve(approval, NOW, "owner", "memory", "tap-1") is True
    assert await moves.approve(approval, NOW, "owner", "memory", "tap-2") is False
    assert await moves.deny(approval, NOW, "owner", "memory", "late", "tap-3") is False
    [granted] = await receipts(app, "approval_granted")
    assert (outcome(granted), granted.parent_id) == ("approved by owner via memory", "tap-1")

    report = await moves.run(approval.id, "tap-1")
    assert report is not None
    assert report.result is not None
    assert await moves.run(approval.id, "tap-2") is None  # never starts twice
    assert not (app.home / "workspace" / "a.txt").exists()
    stored = await store_of(app).get(approval.id)
    assert stored is not None
    assert (stored.state, stored.finished_at, stored.result) == (
        ApprovalState.EXECUTED,
        NOW,
        report.text,
    )
    [run] = await receipts(app, "tool_run")
    assert run.id == report.receipt_id
    assert (run.parent_id, run.quest_id) == ("tap-1", QUEST)
    assert run.decoded("metadata")["policy"] == {
        "verdict": "needs_approval",
        "tier": decision.tier,
        "reason": decision.reason,
        "approved_by": "owner",
        "approved_via": "memory",
        "approval_id": approval.id,
    }


async def test_an_approved_action_no_tool_serves_is_not_run(app: Lancelot) -> None:
    moves = transitions_on(app, HandClock(NOW))
    orphan = ToolAction("nothing.here", None, {"path": "a.txt"})
    approval = await moves.create(orphan, Decision(Verdict.NEEDS_APPROVAL, "T2"), "memory", None)
    assert await moves.approve(approval, NOW, "owner", "memory", None) is True
    report = await moves.run(approval.id, None)
    assert report is not None
    assert report.result is None
    stored = await store_of(app).get(approval.id)
    assert stored is not None
    assert (stored.state, stored.result) == (ApprovalState.NOT_RUN, report.text)


async def test_an_action_changed_after_the_tap_is_refused_and_recorded(app: Lancelot) -> None:
    moves, approval, _ = await asked(app, "a.txt")
    put(app.home / "workspace" / "b.txt", "keep")
    assert await moves.approve(approval, NOW, "owner", "memory", None) is True
    swapped = ToolAction("file.delete", None, {"path": "b.txt"})
    await app.state.execute(
        "UPDATE approvals SET action = ? WHERE id = ?", (swapped.to_json(), approval.id)
    )
    report = await moves.run(approval.id, "tap-1")
    what = "the action changed since it was approved; nothing ran"
    assert report is not None
    assert (report.result, report.error, report.refused) == (None, what, True)
    assert report.text == f"Not run: {what}."
    [refused] = await receipts(app, "approval_refused")
    assert refused.id == report.receipt_id
    assert (refused.status, outcome(refused), refused.parent_id) == (
        ReceiptStatus.REFUSED,
        what,
        "tap-1",
    )
    stored = await store_of(app).get(approval.id)
    assert stored is not None
    assert (stored.state, stored.finished_at, stored.result) == (ApprovalState.NOT_RUN, NOW, what)
    assert (app.home / "workspace" / "b.txt").read_text() == "keep"
    assert await receipts(app, "tool_run") == []


async def test_an_undecided_approval_expires_once_at_the_clocks_time(app: Lancelot) -> None:
    moves, approval, _ = await asked(app, "a.txt")
    assert await moves.expire(approval) is True
    assert await moves.expire(approval) is False
    assert await moves.approve(approval, NOW, "owner", "memory", None) is False
    [lapsed] = await receipts(app, "approval_expired")
    assert (lapsed.status, outcome(lapsed)) == (
        ReceiptStatus.SKIPPED,
        "no decision before the deadline",
    )
    assert await receipts(app, "dry_run_discarded") == []
    stored = await store_of(app).get(approval.id)
    assert stored is not None
    assert (stored.state, stored.decided_at) == (ApprovalState.EXPIRED, NOW)


async def test_a_run_cut_by_a_stop_is_interrupted_and_recorded(app: Lancelot) -> None:
    moves, approval, _ = await asked(app, "a.txt")
    assert await moves.approve(approval, NOW, "owner", "memory", None) is True
    store = store_of(app)
    assert await store.move(approval.id, ApprovalState.APPROVED, ApprovalState.EXECUTING)
    await moves.interrupt(approval)
    [cut] = await receipts(app, "approval_interrupted")
    assert (cut.status, outcome(cut)) == (
        ReceiptStatus.FAILURE,
        "was running when Lancelot stopped; not run again",
    )
    stored = await store.get(approval.id)
    assert stored is not None
    assert (stored.state, stored.finished_at) == (ApprovalState.INTERRUPTED, NOW)
    assert await moves.run(approval.id, None) is None


async def test_a_dry_run_is_discarded_when_its_card_is_denied_or_lapses(
    app: Lancelot, phone: MemoryChannel
) -> None:
    """Both ways a card can end undecided drop the dry run it kept, with a receipt each."""
    put(app.home / "workspace" / "x" / "one.txt")
    put(app.home / "workspace" / "y" / "two.txt")
    denied = await say(app, phone, "/run c=rm; $c -rf x")
    lapsing = await say(app, phone, "/run c=rm; $c -rf y")
    assert [denied.kind, lapsing.kind] == [CardKind.APPROVAL, CardKind.APPROVAL]
    edited = await tap(app, phone, denied, "Deny")
    assert edited is not None
    assert edited.title == "Denied"
    discarded = await receipts(app, "dry_run_discarded")
    assert [(r.action_name, outcome(r)) for r in discarded] == [
        ("shell.apply", "its changes were not applied")
    ]
    await app.state.execute("UPDATE approvals SET expires_at = 0 WHERE state = 'pending'")
    late = await tap(app, phone, lapsing, "Approve")  # after the deadline: it expires instead
    assert late is not None
    assert late.title.startswith("Expired")
    assert len(await receipts(app, "dry_run_discarded")) == 2
    assert (app.home / "workspace" / "y" / "two.txt").exists()
