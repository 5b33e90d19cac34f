"""/features as the owner uses it: every switch on a card, a tap flips one at once (no
approval), leaves a receipt and is kept in LANCELOT_HOME/features.env for the next start."""

from __future__ import annotations

from bot.app import Lancelot, assemble
from core.config import Settings
from core.features import DEFAULTS
from core.receipts.base import ReceiptQuery
from tests.fakes.channel import MemoryChannel
from tests.fakes.owner import say, tap


async def test_a_toggle_applies_at_once_leaves_a_receipt_and_survives_a_restart(
    settings: Settings,
) -> None:
    async with assemble(settings, web=False) as app:
        phone = MemoryChannel()
        await app.attach(phone)
        card = await say(app, phone, "/features")
        assert card.title == "Switches"
        assert len(card.buttons) == len(DEFAULTS)
        assert "agent: on (default)" in card.body
        assert "memory: on (default) (applies at the next start)" in card.body
        edited = await tap(app, phone, card, "Turn off: agent")
        assert edited is not None
        assert "agent: off (" in edited.body
        assert "agent is off; it applies now." in edited.body
        assert "Turn on: agent" in [b.label for b in edited.buttons]
        assert "FEATURE_AGENT" in (await say(app, phone, "hello")).body  # no approval asked
        await app.ledger.flush()
        page = await app.ledger.page(ReceiptQuery(action_type="feature_switched", limit=5))
        (receipt,) = page.receipts
        assert receipt.action_name == "FEATURE_AGENT"
        assert receipt.decoded("inputs") == {"on": False, "was": True, "via": phone.name}
    kept = settings.home / "features.env"
    assert "FEATURE_AGENT=false" in kept.read_text()
    assert kept.stat().st_mode & 0o777 == 0o600
    async with assemble(settings, web=False) as again:
        phone = MemoryChannel()
        await again.attach(phone)
        assert not again.features.enabled("AGENT")
        assert f"agent: off ({kept})" in (await say(again, phone, "/features")).body


async def test_an_old_card_cannot_flip_twice(app: Lancelot, phone: MemoryChannel) -> None:
    card = await say(app, phone, "/features")
    await tap(app, phone, card, "Turn on: safe_mode")
    assert app.features.enabled("SAFE_MODE")
    await tap(app, phone, card, "Turn on: safe_mode")  # the same token again: refused
    await app.ledger.flush()
    page = await app.ledger.page(ReceiptQuery(action_type="feature_switched", limit=5))
    assert len(page.receipts) == 1
