"""Waiting for an approval to settle: every waiter still listening hears how it ended, one
that stopped listening changes nothing for the others, and nothing is kept for an approval
nobody waits for any more."""

from __future__ import annotations

import asyncio

from core.governance.approvals import Approval, ApprovalState
from core.governance.settlement import Settlement, SettlementWaiters
from core.tools.action import ToolAction


def approval(approval_id: str = "a1") -> Approval:
    action = ToolAction("shell.exec", "rm -rf old", {})
    return Approval(
        approval_id, action, action.digest, "T3", "deletes", "card-1", ApprovalState.EXECUTED,
        "telegram", None, 0.0, 60.0, 1.0, "owner", "telegram", 2.0, "ok",
    )  # fmt: skip


async def test_every_waiter_still_listening_hears_the_settlement() -> None:
    waiters = SettlementWaiters()
    first, second, leaving = (waiters.watch("a1") for _ in range(3))
    waiters.unwatch("a1", leaving)
    assert waiters.wanted("a1")  # two still listen
    settled = Settlement(approval())
    waiters.settle(settled)
    assert first.result() is settled
    assert second.result() is settled
    assert not leaving.done()


async def test_a_cancelled_waiter_does_not_stop_the_others_hearing() -> None:
    waiters = SettlementWaiters()
    cancelled, live = waiters.watch("a1"), waiters.watch("a1")
    cancelled.cancel()  # stopped, not yet unwatched (its finally runs later)
    waiters.settle(Settlement(approval()))
    assert live.result().approval.id == "a1"


async def test_an_approval_nobody_waits_for_keeps_nothing() -> None:
    waiters = SettlementWaiters()
    one, two = waiters.watch("a1"), waiters.watch("a1")
    waiters.unwatch("a1", one)
    waiters.unwatch("a1", one)  # twice (a result, then the finally): harmless
    waiters.unwatch("a1", two)
    assert not waiters.wanted("a1")
    # One entry per approval ever waited on would grow for as long as Lancelot runs.
    assert waiters._waiting == {}
    waiters.settle(Settlement(approval()))  # nobody to wake: nothing happens
    assert not one.done()


async def test_waiters_of_other_approvals_are_not_woken() -> None:
    waiters = SettlementWaiters()
    other = waiters.watch("a2")
    waiters.settle(Settlement(approval("a1")))
    await asyncio.sleep(0)
    assert not other.done()
    assert waiters.wanted("a2")
