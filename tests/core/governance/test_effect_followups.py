"""What an approved dry run adds to its outcome card, over changes and dry runs kept in
memory (the sandbox's own need Docker): Undo while the change can be taken back, Dry run
again when the workspace moved under it, nothing otherwise; Deny drops the kept dry run."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from core.commands.registry import PressContext
from core.errors import InvalidToken
from core.events import ButtonPress
from core.governance.approvals import Approval, ApprovalState
from core.governance.by_effect import APPLY, RERUN
from core.governance.effect_followups import EffectFollowUps
from core.governance.undo import UndoDesk
from core.receipts.ledger import SqliteLedger
from core.security.owner_view import OwnerView
from core.security.tokens import ActionTokens
from core.state import open_state_db
from core.tools.action import ToolAction
from tests.core.governance.changes import NOW, Clock, Kept, Shelf, deleted


def approval(state: ApprovalState, capability: str = APPLY, **params: object) -> Approval:
    action = ToolAction(capability, "rm old1.txt", {"dry_run": "d1", **params})
    return Approval(
        "a1", action, action.digest, "T3", "deletes a file", "card-a1", state, "memory", None,
        NOW, NOW + 600, NOW, "owner", "memory", NOW, "ok",
    )  # fmt: skip


@dataclass
class Flow:
    followups: EffectFollowUps
    desk: UndoDesk
    kept: Kept
    shelf: Shelf
    tokens: ActionTokens


@pytest.fixture
async def flow(tmp_path: Path) -> AsyncIterator[Flow]:
    clock = Clock()
    db = await open_state_db(tmp_path / "state.db")
    tokens = ActionTokens(db, b"test-secret-0123456789", clock=clock)
    await tokens.setup()
    shelf, kept = Shelf(deleted(1)), Kept()
    await kept.dry_run(ToolAction("shell.exec", "rm old1.txt", {}), None)  # d1
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        desk = UndoDesk(shelf, tokens, ledger, OwnerView("UTC", now=clock), clock)
        yield Flow(EffectFollowUps(kept, desk, tokens), desk, kept, shelf, tokens)
    await db.close()


async def test_an_applied_change_offers_undo_bound_to_its_card(flow: Flow) -> None:
    buttons, title = await flow.followups.outcome_buttons(approval(ApprovalState.EXECUTED))
    assert ([b.label for b in buttons], title) == (["Undo"], None)
    with pytest.raises(InvalidToken, match="bound to another card"):
        await flow.tokens.redeem(buttons[0].action_token, "owner", "card-other")
    grant = await flow.tokens.redeem(buttons[0].action_token, "owner", "card-a1")
    press = PressContext(ButtonPress("memory", "owner", "owner", None, "t"), grant.payload, "", "")
    assert (await flow.desk.on_press(press)).title == "Undone"
    assert flow.shelf.changes[0].state == "undone"


async def test_a_change_that_went_stale_offers_dry_run_again(flow: Flow) -> None:
    flow.shelf.changes.clear()  # nothing was applied
    flow.kept.stale_ids.add("d1")
    for state in (ApprovalState.EXECUTED, ApprovalState.NOT_RUN):
        buttons, title = await flow.followups.outcome_buttons(approval(state))
        assert ([b.label for b in buttons], title) == (["Dry run again"], "Not applied")
    grant = await flow.tokens.redeem(buttons[0].action_token, "owner", "card-a1")
    assert (grant.action, grant.payload) == (RERUN, {"command": "rm old1.txt", "dry_run": "d1"})


async def test_nothing_is_offered_when_nothing_can_follow(flow: Flow) -> None:
    flow.kept.stale_ids.add("d1")
    undecided = (ApprovalState.PENDING, ApprovalState.APPROVED, ApprovalState.EXECUTING)
    for state in (*undecided, ApprovalState.DENIED, ApprovalState.EXPIRED):
        assert await flow.followups.outcome_buttons(approval(state)) == ((), None)
    ran = approval(ApprovalState.EXECUTED, capability="shell.exec")  # no dry run behind it
    assert await flow.followups.outcome_buttons(ran) == ((), None)
    flow.kept.stale_ids.clear()
    flow.shelf.changes.clear()  # undone already, or its window passed
    assert await flow.followups.outcome_buttons(approval(ApprovalState.EXECUTED)) == ((), None)


async def test_a_denied_or_lapsed_apply_drops_its_dry_run(flow: Flow) -> None:
    assert not await flow.followups.drop(approval(ApprovalState.DENIED, capability="shell.exec"))
    assert "d1" in flow.kept.runs
    assert await flow.followups.drop(approval(ApprovalState.DENIED))
    assert "d1" not in flow.kept.runs
