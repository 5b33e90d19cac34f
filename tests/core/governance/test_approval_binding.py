"""An approval runs only the action its card showed: one changed in state.db after the card
went out is refused at the tap, and the owner is told so."""

from __future__ import annotations

import json
import time
from pathlib import Path

from bot.app import Lancelot
from core.governance.approvals import Approval, ApprovalState
from core.receipts.base import ReceiptQuery
from core.tools.action import ToolAction
from tests.fakes.channel import MemoryChannel
from tests.fakes.owner import say, tap
from tests.fakes.workspace import put

# What someone who can write state.db puts in the approval's place.
SWAPPED = ToolAction("shell.exec", "rm -rf /workspace/precious")


async def asked_to_delete_old(app: Lancelot, phone: MemoryChannel) -> tuple[Approval, Path]:
    """The owner asks to delete old/ (its card waits), beside a precious/ that must stay."""
    workspace = app.home / "workspace"
    put(workspace / "old" / "f.txt")
    put(workspace / "precious" / "keep.txt", "precious")
    card = await say(app, phone, "/run rm -rf /workspace/old")
    assert [b.label for b in card.buttons] == ["Approve", "Deny"]
    assert app.governance is not None
    [approval] = await app.governance.approval_store.in_states(ApprovalState.PENDING)
    return approval, workspace


async def receipt_names(app: Lancelot, action_type: str) -> list[str]:
    await app.ledger.flush()
    page = await app.ledger.page(ReceiptQuery(action_type=action_type, limit=50))
    return [r.action_name for r in page.receipts]


async def approve_and_see_refusal(app: Lancelot, phone: MemoryChannel, workspace: Path) -> None:
    """Tap Approve on the card the owner saw: nothing runs, the card says why."""
    card = next(c for _, c in phone.delivered if c.buttons)
    edited = await tap(app, phone, card, "Approve")
    assert edited is not None
    assert edited.body.splitlines()[-1] == "Refused: the action changed."
    assert (workspace / "precious" / "keep.txt").read_text() == "precious"
    assert (workspace / "old" / "f.txt").exists()
    assert await receipt_names(app, "tool_run") == []
    assert await receipt_names(app, "approval_refused") == [SWAPPED.capability]
    page = await app.ledger.page(ReceiptQuery(action_type="approval_refused", limit=1))
    assert json.loads(page.receipts[0].outputs) == {
        "outcome": "the action changed since the card was sent"
    }


async def test_a_tap_on_an_approval_gone_from_the_store_does_nothing(
    app: Lancelot, phone: MemoryChannel
) -> None:
    approval, workspace = await asked_to_delete_old(app, phone)
    await app.state.execute("DELETE FROM approvals WHERE id = ?", (approval.id,))
    sent = len(phone.delivered)
    card = next(c for _, c in phone.delivered if c.buttons)
    assert await tap(app, phone, card, "Approve") is None  # no edit, nothing ran
    assert len(phone.delivered) == sent  # and no error told
    assert (workspace / "old" / "f.txt").exists()
    assert await receipt_names(app, "tool_run") == []


async def test_a_tap_after_the_deadline_expires_the_approval_instead_of_running_it(
    app: Lancelot, phone: MemoryChannel
) -> None:
    # The deadline passed a moment ago and the sweeper has not expired it yet.
    approval, workspace = await asked_to_delete_old(app, phone)
    await app.state.execute(
        "UPDATE approvals SET expires_at = ? WHERE id = ?", (time.time() - 1, approval.id)
    )
    card = next(c for _, c in phone.delivered if c.buttons)
    edited = await tap(app, phone, card, "Approve")
    assert edited is not None
    assert "Expired: nobody decided in time, so nothing ran." in edited.body.splitlines()
    assert (workspace / "old" / "f.txt").exists()
    assert await receipt_names(app, "tool_run") == []
    assert await receipt_names(app, "approval_expired") == [approval.action.capability]


async def test_an_action_rewritten_in_the_store_does_not_run(
    app: Lancelot, phone: MemoryChannel
) -> None:
    approval, workspace = await asked_to_delete_old(app, phone)
    await app.state.execute(
        "UPDATE approvals SET action = ? WHERE id = ?", (SWAPPED.to_json(), approval.id)
    )
    await approve_and_see_refusal(app, phone, workspace)


async def test_another_action_under_the_same_approval_id_does_not_run(
    app: Lancelot, phone: MemoryChannel
) -> None:
    # The row is consistent again (action and hash both replaced): only the card's own
    # button, which carries the hash the owner was shown, tells them apart.
    approval, workspace = await asked_to_delete_old(app, phone)
    await app.state.execute(
        "UPDATE approvals SET action = ?, action_hash = ? WHERE id = ?",
        (SWAPPED.to_json(), SWAPPED.digest, approval.id),
    )
    await approve_and_see_refusal(app, phone, workspace)


async def test_an_action_rewritten_with_its_buttons_does_not_run(
    app: Lancelot, phone: MemoryChannel
) -> None:
    # The buttons' stored payloads now carry the new hash too: the approval's own record of
    # the hash the owner was shown tells them apart.
    approval, workspace = await asked_to_delete_old(app, phone)
    await app.state.execute(
        "UPDATE approvals SET action = ? WHERE id = ?", (SWAPPED.to_json(), approval.id)
    )
    changed = await app.state.execute(
        "UPDATE action_tokens SET payload = replace(payload, ?, ?) WHERE card_id = ?",
        (approval.action_hash, SWAPPED.digest, approval.card_id),
    )
    assert changed.rowcount == 2
    await approve_and_see_refusal(app, phone, workspace)


async def test_an_approved_action_rewritten_before_a_restart_runs_it_does_not_run(
    app: Lancelot, phone: MemoryChannel
) -> None:
    # Approved, then stopped before it ran; the row rewritten while Lancelot was down. The
    # restart's reconcile runs what is approved, so it checks the hash itself.
    approval, workspace = await asked_to_delete_old(app, phone)
    await app.state.execute(
        "UPDATE approvals SET state = ?, action = ? WHERE id = ?",
        (ApprovalState.APPROVED.value, SWAPPED.to_json(), approval.id),
    )
    assert app.governance is not None
    await app.governance.approvals.reconcile()
    assert (workspace / "precious" / "keep.txt").read_text() == "precious"
    assert await receipt_names(app, "tool_run") == []
    assert await receipt_names(app, "approval_refused") == [SWAPPED.capability]
    settled = await app.governance.approval_store.get(approval.id)
    assert settled is not None
    assert settled.state is ApprovalState.NOT_RUN
    assert "the action changed" in (settled.result or "")
