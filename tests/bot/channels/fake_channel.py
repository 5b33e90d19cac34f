"""A channel defined in this one file and registered through the same API as the real ones:
its settings are its own section, its platform a `FakePeer` the test holds (like the fake
Bot API server for Telegram): what people type there reaches Lancelot through the channel,
and the cards Lancelot sends land there."""

from __future__ import annotations

import asyncio
import itertools
import logging

from aiohttp import web
from pydantic import BaseModel, SecretStr

from bot.channels.spec import ChannelSpec
from bot.doctor.report import Finding, failed, ok
from bot.kernel import Kernel
from bot.pairing import Answer, OwnerBook, OwnerSetting, PairingGate
from core.bus import Bus
from core.channel import Channel
from core.config import Settings
from core.events import ButtonPress, Card, Inbound, MessageRef

NAME = "fake"

log = logging.getLogger(__name__)


class FakeSettings(BaseModel):
    """The fake channel's settings section: a token and, optionally, its owner."""

    token: SecretStr | None = None
    owner_id: str = ""


class FakePeer:
    """The platform: people write and press buttons here; the cards sent to them land here."""

    def __init__(self) -> None:
        self.channel: FakeChannel | None = None  # the channel now serving on it
        self.attached = asyncio.Event()  # set when a channel starts serving on it
        self.cards: asyncio.Queue[tuple[MessageRef, Card]] = asyncio.Queue()
        self.edits: asyncio.Queue[tuple[MessageRef, Card]] = asyncio.Queue()

    def _serving(self) -> FakeChannel:
        if self.channel is None:
            raise RuntimeError("no Lancelot is serving the fake channel")
        return self.channel

    async def say(self, sender: str, text: str) -> None:
        """`sender` writes `text` in their chat (the chat is named after them)."""
        await self._serving().receive(sender, text)

    async def press(self, sender: str, ref: MessageRef, token: str) -> None:
        """`sender` taps the button holding `token` on the message `ref`."""
        await self._serving().pressed(sender, ref, token)

    async def next_card(self, wait: float = 30.0) -> tuple[MessageRef, Card]:
        """The next card Lancelot sent, waiting up to `wait` seconds."""
        return await asyncio.wait_for(self.cards.get(), wait)


class FakeChannel:
    """A Channel on the fake platform: its owner's messages and taps go on the bus, a
    stranger's go to pairing while it has no owner, and are dropped once it has one."""

    def __init__(self, bus: Bus, peer: FakePeer, owner: str, pairing: PairingGate | None) -> None:
        self.name = NAME
        self._bus = bus
        self._peer = peer
        self._owner = owner
        self._ids = itertools.count(1)
        self._pairing = pairing
        if pairing is not None:
            pairing.bind(self._adopt)

    @property
    def owner_chat_ids(self) -> tuple[str, ...]:
        return (self._owner,) if self._owner else ()

    def _adopt(self, owner_id: str) -> None:
        self._owner = owner_id

    async def receive(self, sender: str, text: str) -> None:
        """A message on the platform."""
        if sender == self._owner:
            await self._bus.publish(Inbound(NAME, sender, sender, text))
        elif self._pairing is not None and not self._pairing.closed:
            await self._pairing.knock(sender, sender, sender, text, self._answer(sender))

    async def pressed(self, sender: str, ref: MessageRef, token: str) -> None:
        """A tap on a button; only the owner's count."""
        if sender == self._owner:
            await self._bus.publish(ButtonPress(NAME, sender, ref.chat_id, ref, token))

    def _answer(self, chat_id: str) -> Answer:
        async def answer(card: Card) -> None:
            await self.deliver(chat_id, card)

        return answer

    async def deliver(self, chat_id: str, card: Card) -> MessageRef:
        ref = MessageRef(NAME, chat_id, str(next(self._ids)))
        self._peer.cards.put_nowait((ref, card))
        return ref

    async def edit(self, ref: MessageRef, card: Card) -> None:
        self._peer.edits.put_nowait((ref, card))

    async def typing(self, chat_id: str) -> None:
        """The fake platform shows no typing."""


class FakeWiring:
    """Serves the fake channel on `peer`, pairing when no owner is known."""

    receives = True

    def __init__(self, peer: FakePeer, token: SecretStr | None) -> None:
        self._peer = peer
        self._token = token

    def routes(self) -> list[web.RouteDef]:
        return []

    async def attach(self, app: Kernel, owners: OwnerBook) -> Channel:
        owner = next(iter(owners.owner_ids(NAME)), "")
        pairing = None if owner else owners.open(NAME, ledger=app.ledger, tasks=app.tasks)
        channel = FakeChannel(app.bus, self._peer, owner, pairing)
        await app.attach(channel)
        self._peer.channel = channel
        self._peer.attached.set()
        if self._token is not None:  # a careless channel: the redactor must catch this
            log.info("fake: serving with token %s", self._token.get_secret_value())
        if pairing is not None:
            pairing.start()
        return channel


def fake_spec(section: FakeSettings, peer: FakePeer | None = None) -> ChannelSpec:
    """The fake channel's descriptor, reading `section` as its settings, serving on `peer`."""
    platform = peer or FakePeer()

    async def doctor(settings: Settings) -> list[Finding]:
        if section.token is None:
            return [failed("fake", "no token", "set the fake token")]
        return [ok("fake", "the token is there")]

    return ChannelSpec(
        name=NAME,
        label="Fake",
        configured=lambda settings: section.token is not None,
        wiring=lambda settings: FakeWiring(platform, section.token),
        secrets=lambda settings: (section.token,),
        owner=OwnerSetting(
            "FAKE_OWNER_ID", lambda s: (section.owner_id,) if section.owner_id else ()
        ),
        doctor=doctor,
        setup_hint="set the fake token",
    )
