"""/features as the owner uses it: every switch on a card, a tap flips one at once (no
approval), leaves a receipt and is kept in LANCELOT_HOME/features.env for the next start."""

from __future__ import annotations

import logging

import pytest

from bot.app import Lancelot, assemble
from core.config import Settings
from core.features import AT_START, DEFAULTS
from core.receipts.base import ReceiptQuery
from core.receipts.model import ReceiptStatus, StoredReceipt
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


async def switched(app: Lancelot) -> StoredReceipt:
    """The one feature_switched receipt so far."""
    await app.ledger.flush()
    (receipt,) = (await app.ledger.page(ReceiptQuery(action_type="feature_switched"))).receipts
    return receipt


async def test_the_card_has_a_line_per_switch_and_says_where_a_toggle_is_kept(
    app: Lancelot, phone: MemoryChannel, settings: Settings
) -> None:
    card = await say(app, phone, "/features")
    assert (
        "/features - the FEATURE_* switches, each with a toggle"
        in (await say(app, phone, "/help")).body
    )
    switches, footer = card.body.split("\n\n")
    lines = switches.split("\n")
    assert [line.partition(":")[0] for line in lines] == [n.lower() for n in sorted(DEFAULTS)]
    assert "agent: on (default)" in lines  # read at every use: no note
    for name, line in zip(sorted(DEFAULTS), lines, strict=True):
        assert line.endswith(" (applies at the next start)") == (name in AT_START), line
    assert footer == f"A toggle is kept in {settings.home / 'features.env'}."


@pytest.mark.app(features={"FEATURE_AGENT": "true"})
async def test_with_nowhere_to_keep_them_toggles_last_until_lancelot_stops(
    app: Lancelot, phone: MemoryChannel
) -> None:
    card = await say(app, phone, "/features")
    assert card.body.endswith("\n\nToggles last until Lancelot stops.")
    assert "agent: on (the environment)" in card.body


async def test_a_toggle_says_when_it_applies_on_the_card_and_in_its_receipt(
    app: Lancelot, phone: MemoryChannel, settings: Settings
) -> None:
    card = await say(app, phone, "/features")
    edited = await tap(app, phone, card, "Turn off: memory")
    assert edited is not None
    assert edited.title == "Switches (changed)"
    assert edited.body.endswith("\n\nmemory is off; it applies at the next start.")
    receipt = await switched(app)
    assert receipt.status == ReceiptStatus.SUCCESS
    assert receipt.decoded("outputs") == {"kept_in": str(settings.home / "features.env")}
    assert receipt.decoded("metadata") == {"applies": "at the next start"}


async def test_a_toggle_read_at_every_use_applies_now(app: Lancelot, phone: MemoryChannel) -> None:
    card = await say(app, phone, "/features")
    await tap(app, phone, card, "Turn on: safe_mode")
    assert (await switched(app)).decoded("metadata") == {"applies": "now"}


@pytest.mark.app(features={})
async def test_a_toggle_kept_nowhere_says_so_in_its_receipt(
    app: Lancelot, phone: MemoryChannel
) -> None:
    card = await say(app, phone, "/features")
    await tap(app, phone, card, "Turn on: safe_mode")
    assert app.features.enabled("SAFE_MODE")
    assert (await switched(app)).decoded("outputs") == {"kept_in": "memory"}


async def test_a_toggle_that_cannot_be_kept_changes_nothing_and_the_owner_is_told(
    app: Lancelot, phone: MemoryChannel, settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    card = await say(app, phone, "/features")
    (settings.home / "features.env").mkdir()  # a folder where the file goes: it cannot be read
    with caplog.at_level(logging.WARNING, logger="core.governance.switches"):
        edited = await tap(app, phone, card, "Turn off: agent")
    assert edited is not None
    assert edited.title == "Switches"
    assert edited.body.endswith("\n\nCould not switch agent: the details are in the log.")
    assert app.features.enabled("AGENT")
    (warning,) = [r.getMessage() for r in caplog.records if r.name.endswith(".switches")]
    assert warning.startswith("features: could not switch AGENT: [Errno 21] Is a directory")
    receipt = await switched(app)
    assert receipt.status == ReceiptStatus.FAILURE
    assert "features.env" in (receipt.error_message or "")
    assert receipt.decoded("inputs") == {"on": False, "was": True, "via": phone.name}
