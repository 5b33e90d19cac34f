"""Every failure leaves a receipt: a handler that crashes is recorded and the owner told."""

from __future__ import annotations

import pytest

from bot.app import Lancelot
from core.commands.registry import CommandContext, PressContext, Router
from core.events import Button, ButtonPress, Card, CardKind
from core.receipts.base import ReceiptQuery
from core.receipts.model import ReceiptStatus
from tests.fakes.channel import MemoryChannel
from tests.fakes.owner import CHAT, OWNER, say


async def _crash(ctx: CommandContext) -> Card:
    raise KeyError("a bug with password=hunter2 in it")


async def _crash_press(ctx: PressContext) -> Card:
    raise RuntimeError("a broken button")


CRASHING = Router("crashing")
CRASHING.command("crash", "crashes", _crash)
CRASHING.action("broken", _crash_press)

pytestmark = pytest.mark.app(routers=[CRASHING])


async def test_a_crashing_command_leaves_a_failure_receipt_and_a_short_answer(
    app: Lancelot, phone: MemoryChannel
) -> None:
    card = await say(app, phone, "/crash")
    assert card.title == "/crash failed on my side"
    await app.ledger.flush()
    page = await app.ledger.page(ReceiptQuery(action_type="command"))
    failed = page.receipts[0]
    assert failed.action_name == "crash"
    assert failed.status == ReceiptStatus.FAILURE
    assert failed.id in card.body  # the owner can find it
    assert failed.error_message is not None
    assert failed.error_message.startswith("crashed: KeyError")
    assert "hunter2" not in failed.error_message  # redacted like any receipt
    inbound = await app.ledger.get(failed.parent_id or "")
    assert inbound is not None
    assert inbound.action_type == "inbound"
    kinds = [c.action_type for c in await app.ledger.children(inbound.id)]
    assert kinds == ["command", "reply"]
    assert "Traceback" not in card.body


async def test_a_crashing_button_leaves_a_failure_receipt(
    app: Lancelot, phone: MemoryChannel
) -> None:
    token = await app.tokens.issue("broken", {}, "card-1")
    await app.bus.broadcast(
        Card(
            kind=CardKind.REPLY, title="t", buttons=(Button("Go", token),), correlation_id="card-1"
        )
    )
    ref, _ = await phone.next_card()
    await app.bus.publish(ButtonPress(phone.name, OWNER, CHAT, ref, token))
    _, answer = await phone.next_card()
    assert answer.title == "That failed on my side"
    await app.ledger.flush()
    page = await app.ledger.page(ReceiptQuery(action_type="handler_failed"))
    assert len(page.receipts) == 1
    failure = page.receipts[0]
    assert failure.action_name == "button"
    assert failure.status == ReceiptStatus.FAILURE
    assert failure.error_message == "crashed: RuntimeError: a broken button"
    assert failure.id in answer.body
