"""An approval's deadline is the last instant its buttons count: a tap at that very instant
still decides (the expiry loop and a restart's reconcile lapse only what is past it); a tap
a moment later expires it instead."""

from __future__ import annotations

from dataclasses import dataclass

from bot.app import Lancelot
from core.commands.registry import PressContext
from core.events import ButtonPress
from core.governance.approval_service import ApprovalService
from core.governance.approvals import Approval, ApprovalState
from core.governance.execution import Executor
from core.tools.file_ops import file_action
from core.tools.workspace import Workspace
from tests.fakes.channel import MemoryChannel
from tests.fakes.owner import CHAT, OWNER


@dataclass
class HandClock:
    """A clock the test sets: the approval service reads `now` for every tap."""

    now: float = 0.0

    def __call__(self) -> float:
        return self.now


async def ask_to_delete(
    app: Lancelot, clock: HandClock, name: str
) -> tuple[ApprovalService, Approval]:
    """An approval service on the app's store, ledger and tools, timed by `clock`; the
    pending approval it made to delete workspace file `name`."""
    kit = app.governance
    assert kit is not None
    (app.home / "workspace" / name).write_text("bye")
    action = file_action(Workspace(app.home / "workspace"), "file.delete", {"path": name})
    decision = kit.policy.decide(action)
    assert decision.verdict == "needs_approval"
    executor = Executor(kit.policy, kit.tools, app.ledger)
    service = ApprovalService(
        kit.approval_store, app.tokens, app.bus, app.ledger, executor, lambda: 60.0, clock
    )
    approval = await kit.approval_store.get(await service.request(action, decision, "memory"))
    assert approval is not None
    return service, approval


async def approve_at(service: ApprovalService, approval: Approval, phone: MemoryChannel) -> None:
    """The owner taps Approve on the approval's card (its token already checked)."""
    ref = next(r for r, c in phone.delivered if c.buttons)
    press = ButtonPress(phone.name, OWNER, CHAT, ref, "checked-token")
    payload = {"approval_id": approval.id, "choice": "approve", "hash": approval.action_hash}
    await service.on_press(PressContext(press, payload, approval.card_id, "press-receipt"))


async def test_a_tap_at_the_very_deadline_still_decides(
    app: Lancelot, phone: MemoryChannel
) -> None:
    clock = HandClock()
    service, approval = await ask_to_delete(app, clock, "old.txt")
    clock.now = approval.expires_at
    await approve_at(service, approval, phone)
    settled = await app.governance.approval_store.get(approval.id)  # type: ignore[union-attr]
    assert settled is not None
    assert settled.state is ApprovalState.EXECUTED
    assert not (app.home / "workspace" / "old.txt").exists()


async def test_a_tap_just_past_the_deadline_expires_it(app: Lancelot, phone: MemoryChannel) -> None:
    clock = HandClock()
    service, approval = await ask_to_delete(app, clock, "late.txt")
    clock.now = approval.expires_at + 0.001
    await approve_at(service, approval, phone)
    settled = await app.governance.approval_store.get(approval.id)  # type: ignore[union-attr]
    assert settled is not None
    assert settled.state is ApprovalState.EXPIRED
    assert (app.home / "workspace" / "late.txt").read_text() == "bye"
