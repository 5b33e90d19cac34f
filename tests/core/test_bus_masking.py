"""No card carries a secret: the bus masks a key in a card's body and fields, raw or encoded
(an approved `base64 -w0 .env` shows [REDACTED]), on delivery and on every edit; a card
with none goes out as it was."""

from __future__ import annotations

import base64
from dataclasses import replace

from core.bus import Bus
from core.events import Card, CardKind
from core.receipts.redaction import MASK, Redactor
from tests.fakes.channel import MemoryChannel

KEY = "sk-test-NOT-A-REAL-KEY-000000000000"
ENCODED = base64.b64encode(f"OPENAI_API_KEY={KEY}\n".encode()).decode()


async def test_a_card_never_carries_a_secret_raw_or_encoded() -> None:
    bus = Bus(redactor=Redactor([KEY]))
    phone = MemoryChannel()
    bus.attach(phone)
    card = Card(
        CardKind.APPROVAL,
        "Executed",
        f"$ base64 -w0 .env\nexit 0\n{ENCODED}",
        fields=(("Output", KEY.encode().hex()),),
    )
    await bus.send(phone.name, "owner-chat", card)
    [(_, shown)] = phone.delivered
    assert ENCODED not in shown.body
    assert shown.body.endswith(MASK)
    assert shown.fields == (("Output", MASK),)
    await bus.update(card.correlation_id, replace(card, body=f"Undone. It printed {KEY}"))
    [(_, edited)] = phone.edits
    assert edited.body == f"Undone. It printed {MASK}"


async def test_a_card_without_secrets_goes_out_unchanged() -> None:
    bus = Bus(redactor=Redactor())
    phone = MemoryChannel()
    bus.attach(phone)
    card = Card(CardKind.REPLY, "Hello", "Plant peas in March: https://garden.example/peas")
    await bus.send(phone.name, "owner-chat", card)
    assert phone.delivered[0][1] is card
