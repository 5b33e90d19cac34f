"""An approval service of the test's own over a running app's store, ledger, bus and tools,
with a clock and a supervisor the test holds: for what the app's own wiring cannot show (a
deadline's exact instant, a replayed request, the service's own lifetime)."""

from __future__ import annotations

from dataclasses import dataclass

from bot.app import Lancelot
from core.commands.registry import PressContext
from core.events import ButtonPress, Card
from core.governance.approval_service import ApprovalService
from core.governance.approvals import Approval, ApprovalStore
from core.governance.execution import Executor
from core.governance.policy import Decision
from core.receipts.base import ReceiptQuery
from core.runtime.tasks import Supervisor
from core.tools.action import ToolAction
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


def store_of(app: Lancelot) -> ApprovalStore:
    """The app's approval store."""
    assert app.governance is not None
    return app.governance.approval_store


def service_on(
    app: Lancelot,
    clock: HandClock | None = None,
    tasks: Supervisor | None = None,
    remind_after: float | None = None,
    store: ApprovalStore | None = None,
) -> ApprovalService:
    """An approval service on the app's parts (a 60-second deadline; a reminder
    `remind_after` seconds after the request, if given), timed by `clock`; over `store`
    when given (the app's state.db all the same)."""
    kit = app.governance
    assert kit is not None
    executor = Executor(kit.policy, kit.tools, app.ledger)
    return ApprovalService(
        store or kit.approval_store,
        app.tokens,
        app.bus,
        app.ledger,
        executor,
        lambda: 60.0,
        clock or HandClock(),
        lambda: remind_after,
        owner=app.owner,
        tasks=tasks,
    )


def deleting(app: Lancelot, name: str) -> tuple[ToolAction, Decision]:
    """Deleting workspace file `name` (made here), and the policy's verdict: ask the owner."""
    kit = app.governance
    assert kit is not None
    (app.home / "workspace" / name).write_text("bye")
    action = file_action(Workspace(app.home / "workspace"), "file.delete", {"path": name})
    decision = kit.policy.decide(action)
    assert decision.verdict == "needs_approval"
    return action, decision


async def press(
    service: ApprovalService, approval: Approval, phone: MemoryChannel, choice: str
) -> Card | None:
    """The owner taps Approve or Deny (`choice`) on the approval's card, token checked."""
    ref = next(r for r, c in phone.delivered if c.buttons)
    event = ButtonPress(phone.name, OWNER, CHAT, ref, "checked-token")
    payload = {"approval_id": approval.id, "choice": choice, "hash": approval.action_hash}
    return await service.on_press(PressContext(event, payload, approval.card_id, "press"))


async def requested(app: Lancelot) -> int:
    """How many approval requests the ledger holds."""
    await app.ledger.flush()
    page = await app.ledger.page(ReceiptQuery(action_type="approval_requested", limit=100))
    return len(page.receipts)


def cards_with_buttons(phone: MemoryChannel) -> int:
    """How many cards with buttons reached the phone."""
    return len([c for _, c in phone.delivered if c.buttons])
