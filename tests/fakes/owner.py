"""The owner on a phone, in tests: say something, tap a button, wait for the answer."""

from __future__ import annotations

from bot.app import Lancelot
from core.events import ButtonPress, Card, Inbound
from tests.fakes.channel import MemoryChannel

OWNER = "owner"
CHAT = "owner-chat"


async def say(app: Lancelot, phone: MemoryChannel, text: str, wait: float = 5.0) -> Card:
    """Send a message as the owner; return the first card that comes back (within `wait`
    seconds)."""
    await app.bus.publish(Inbound(phone.name, OWNER, CHAT, text))
    _, card = await phone.next_card(wait)
    return card


async def tap(app: Lancelot, phone: MemoryChannel, card: Card, label: str) -> Card | None:
    """Tap a button of a delivered card; return the card's latest edit, if any."""
    ref = next(r for r, c in phone.delivered if c.correlation_id == card.correlation_id)
    token = next(b.action_token for b in card.buttons if b.label == label)
    await app.bus.publish(ButtonPress(phone.name, OWNER, CHAT, ref, token))
    await app.bus.drained()
    return phone.edits[-1][1] if phone.edits else None
