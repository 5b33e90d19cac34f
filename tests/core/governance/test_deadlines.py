"""Approvals still lapse after state.db failed for a while: the expiry loop logs, backs off,
retries, and /health names it meanwhile; a loop that dies anyway is named dead in /health."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Callable

import pytest

from bot.app import Lancelot
from core.governance.approvals import Approval, ApprovalState, ApprovalStore
from core.receipts.base import ReceiptQuery
from core.receipts.registry import GovernanceReceipt
from tests.fakes.channel import MemoryChannel
from tests.fakes.owner import say
from tests.fakes.workspace import put


async def _wait_for(condition: Callable[[], bool], within: float = 10.0) -> None:
    deadline = time.monotonic() + within
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition never became true")
        await asyncio.sleep(0.02)


async def _ask(app: Lancelot, phone: MemoryChannel, folder: str) -> Approval:
    """A /run that waits for the owner's approval; the approval it made."""
    put(app.home / "workspace" / folder / "f.txt")
    await say(app, phone, f"/run rm -rf /workspace/{folder}")
    pending = await ApprovalStore(app.state).in_states(ApprovalState.PENDING)
    return next(a for a in pending if folder in a.action.describe())


async def _health(app: Lancelot, phone: MemoryChannel) -> str:
    card = await say(app, phone, "/health")
    return card.body


async def test_an_approval_lapses_after_state_db_was_locked_and_health_said_so_meanwhile(
    app: Lancelot, phone: MemoryChannel, caplog: pytest.LogCaptureFixture
) -> None:
    lapsing = await _ask(app, phone, "old")
    # Its deadline one second from now instead of 30 minutes; a new approval wakes the timer.
    soon = time.time() + 1.0
    await app.state.execute("UPDATE approvals SET expires_at = ? WHERE id = ?", (soon, lapsing.id))
    await _ask(app, phone, "other")
    # Another process holds state.db's write lock past the deadline. The app's connection
    # gives up after 0.1 s instead of its usual 5 s, so the test need not wait that long.
    await app.state.execute("PRAGMA busy_timeout = 100")
    blocker = sqlite3.connect(app.home / "state.db", isolation_level=None)
    try:
        blocker.execute("BEGIN EXCLUSIVE")
        await _wait_for(lambda: "database is locked" in caplog.text)
        assert "approval-expiry (state.db: database is locked)" in await _health(app, phone)
        still = blocker.execute("SELECT state FROM approvals WHERE id = ?", (lapsing.id,))
        assert still.fetchone() == ("pending",)
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    store = ApprovalStore(app.state)

    async def state() -> ApprovalState | None:
        found = await store.get(lapsing.id)
        return found.state if found else None

    for _ in range(500):  # the first retry comes within a second
        if await state() is ApprovalState.EXPIRED:
            break
        await asyncio.sleep(0.02)
    assert await state() is ApprovalState.EXPIRED
    await _wait_for(lambda: any(c.title.startswith("Expired") for _, c in phone.edits))
    await app.ledger.flush()
    page = await app.ledger.page(ReceiptQuery(action_type=GovernanceReceipt.APPROVAL_EXPIRED))
    assert [lapsing.id in r.inputs for r in page.receipts] == [True]
    assert "approval-expiry" not in await _health(app, phone)
    assert app.tasks.died() == ()


async def test_an_expiry_loop_that_dies_anyway_is_named_in_health(
    app: Lancelot, phone: MemoryChannel
) -> None:
    assert "approval-expiry" not in await _health(app, phone)
    broken = await _ask(app, phone, "old")
    # A row no code can read (its action is not JSON): not a passing database error.
    await app.state.execute("UPDATE approvals SET action = '{' WHERE id = ?", (broken.id,))
    put(app.home / "workspace" / "other" / "f.txt")
    await say(app, phone, "/run rm -rf /workspace/other")  # wakes the loop: it reads that row
    await _wait_for(lambda: app.tasks.died() == ("approval-expiry",))
    body = await _health(app, phone)
    assert "background task stopped: approval-expiry (JSONDecodeError)" in body
