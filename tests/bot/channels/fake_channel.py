"""A channel defined in this one file and registered through the same API as the real ones:
its settings are its own section, its peer an in-memory channel (tests/fakes/channel.py)."""

from __future__ import annotations

from aiohttp import web
from pydantic import BaseModel, SecretStr

from bot.channels.spec import ChannelSpec
from bot.doctor.report import Finding, failed, ok
from bot.kernel import Kernel
from bot.pairing import OwnerBook, OwnerSetting
from core.channel import Channel
from core.config import Settings
from tests.fakes.channel import MemoryChannel

NAME = "fake"


class FakeSettings(BaseModel):
    """The fake channel's settings section: a token and, optionally, its owner."""

    token: SecretStr | None = None
    owner_id: str = ""


class FakeWiring:
    """Attaches an in-memory channel: the cards it is given are the peer's."""

    receives = True

    def __init__(self, settings: Settings) -> None:
        self.channel = MemoryChannel(NAME)

    def routes(self) -> list[web.RouteDef]:
        return []

    async def attach(self, app: Kernel, owners: OwnerBook) -> Channel:
        await app.attach(self.channel)
        return self.channel


def fake_spec(section: FakeSettings) -> ChannelSpec:
    """The fake channel's descriptor, reading `section` as its settings."""

    async def doctor(settings: Settings) -> list[Finding]:
        if section.token is None:
            return [failed("fake", "no token", "set the fake token")]
        return [ok("fake", "the token is there")]

    return ChannelSpec(
        name=NAME,
        label="Fake",
        configured=lambda settings: section.token is not None,
        wiring=FakeWiring,
        secrets=lambda settings: (section.token,),
        owner=OwnerSetting(
            "FAKE_OWNER_ID", lambda s: (section.owner_id,) if section.owner_id else ()
        ),
        doctor=doctor,
        setup_hint="set the fake token",
    )
