"""An approval's deadline is the last instant its buttons count: a tap at that very instant
still decides (the expiry loop and a restart's reconcile lapse only what is past it); a tap
a moment later expires it instead."""

from __future__ import annotations

from bot.app import Lancelot
from core.governance.approvals import ApprovalState
from tests.core.governance.service_rig import HandClock, deleting, press, service_on, store_of
from tests.fakes.channel import MemoryChannel


async def test_a_tap_at_the_very_deadline_still_decides(
    app: Lancelot, phone: MemoryChannel
) -> None:
    clock = HandClock()
    service = service_on(app, clock)
    approval = await store_of(app).get(await service.request(*deleting(app, "old.txt"), "memory"))
    assert approval is not None
    clock.now = approval.expires_at
    await press(service, approval, phone, "approve")
    settled = await store_of(app).get(approval.id)
    assert settled is not None
    assert settled.state is ApprovalState.EXECUTED
    assert not (app.home / "workspace" / "old.txt").exists()


async def test_a_tap_just_past_the_deadline_expires_it(app: Lancelot, phone: MemoryChannel) -> None:
    clock = HandClock()
    service = service_on(app, clock)
    approval = await store_of(app).get(await service.request(*deleting(app, "late.txt"), "memory"))
    assert approval is not None
    clock.now = approval.expires_at + 0.001
    await press(service, approval, phone, "approve")
    settled = await store_of(app).get(approval.id)
    assert settled is not None
    assert settled.state is ApprovalState.EXPIRED
    assert (app.home / "workspace" / "late.txt").read_text() == "bye"
