"""An approval waited on (an agent's step) is keyed by its update and step: asked again, as
a request redone after a crash asks, the same approval is waited on; one that settled
meanwhile is reported, and what it ran does not run again."""

from __future__ import annotations

import asyncio

from bot.app import Lancelot
from core.governance.approvals import ApprovalState, ApprovalStore
from core.governance.outcomes import OutcomeKind, ToolOutcome
from core.receipts.base import ReceiptQuery
from core.tools.action import ToolAction
from core.tools.file_ops import file_action
from core.tools.workspace import Workspace
from tests.fakes.channel import MemoryChannel
from tests.fakes.owner import tap

KEY = "message:memory:7:step:1"


async def ask(app: Lancelot) -> ToolOutcome:
    """The step: write a file, which the request's flow makes the owner decide."""
    assert app.governance is not None
    action = file_action(
        Workspace(app.home / "workspace"), "file.write", {"path": "a.txt", "content": "a\n"}
    )
    return await app.governance.gateway.run(
        action, via="memory", parent_id="step", quest_id=None, ask="the owner decides", key=KEY
    )


async def pending(app: Lancelot) -> list[str]:
    return [a.id for a in await ApprovalStore(app.state).in_states(ApprovalState.PENDING)]


async def runs(app: Lancelot) -> int:
    await app.ledger.flush()
    return len((await app.ledger.page(ReceiptQuery(action_type="tool_run", limit=10))).receipts)


async def test_a_step_asked_again_waits_on_its_first_approval_and_never_runs_twice(
    app: Lancelot,
) -> None:
    phone = MemoryChannel()
    await app.attach(phone)
    first = asyncio.create_task(ask(app))
    _, card = await phone.next_card(5.0)
    [asked] = await pending(app)
    first.cancel()  # the request's task dies with the process; the approval stays pending
    await asyncio.gather(first, return_exceptions=True)

    again = asyncio.create_task(ask(app))  # the request redone after the restart
    await asyncio.sleep(0.5)
    assert await pending(app) == [asked]  # no second approval
    # Any card is the first approval's (the outbox of a real channel sends it once).
    assert {c.correlation_id for _, c in phone.delivered} == {card.correlation_id}
    await tap(app, phone, card, "Approve")
    outcome = await asyncio.wait_for(again, 5.0)
    assert outcome.kind is OutcomeKind.RAN
    assert outcome.approval_id == asked

    # Redone once more, after it ran: reported at once, not run again.
    redone = await asyncio.wait_for(ask(app), 5.0)
    assert redone.kind is OutcomeKind.ALREADY_RAN
    assert redone.reason == "approval executed before Lancelot restarted; not run again"
    assert await runs(app) == 1


async def test_a_step_asked_again_after_its_approval_could_not_run_hears_it_failed(
    app: Lancelot,
) -> None:
    phone = MemoryChannel()
    await app.attach(phone)
    first = asyncio.create_task(ask(app))
    await phone.next_card(5.0)
    [asked] = await pending(app)
    first.cancel()
    await asyncio.gather(first, return_exceptions=True)
    # Approved while Lancelot was down, the row rewritten meanwhile: the restart's reconcile
    # refuses to run it (its hash no longer matches), so nothing ran.
    swapped = ToolAction("shell.exec", "rm -rf /workspace")
    await app.state.execute(
        "UPDATE approvals SET state = ?, action = ? WHERE id = ?",
        (ApprovalState.APPROVED.value, swapped.to_json(), asked),
    )
    assert app.governance is not None
    await app.governance.approvals.reconcile()

    redone = await asyncio.wait_for(ask(app), 5.0)
    assert redone.kind is OutcomeKind.FAILED
    assert redone.reason == "approval not_run before Lancelot restarted; not run again"
    assert await runs(app) == 0
