"""Pairing on Google Chat: with GCHAT_AUDIENCE and no GCHAT_OWNER_EMAIL, the first verified
sender of the code printed where Lancelot runs becomes the Chat owner; an unverified request
never reaches pairing."""

from __future__ import annotations

import contextlib
import io
import re
from collections.abc import AsyncIterator
from pathlib import Path

from bot.app import Lancelot, assemble
from bot.channels.gchat.setup import attach_gchat, gchat_endpoint
from bot.runner import owner_book
from core.config import Settings
from tests.bot.channels.telegram.harness import QUICK
from tests.fakes.gchat import ChatUser, FakeGoogle, texts

from .harness import OWNER_EMAIL, PROJECT_NUMBER, SPACE, STRANGER_EMAIL, settings_for

CODE = re.compile(r"Pairing code for Google Chat: ([A-Z2-9]{4}-[A-Z2-9]{4})")


@contextlib.asynccontextmanager
async def unowned(
    google: FakeGoogle, settings: Settings
) -> AsyncIterator[tuple[Lancelot, io.StringIO, ChatUser, ChatUser]]:
    """assemble() + attach_gchat() as `lancelot run` does, the console captured; the first
    person and a stranger in their own spaces."""
    console = io.StringIO()
    endpoint = gchat_endpoint(settings)
    assert endpoint is not None
    async with assemble(settings, routes=endpoint.routes(), delivery=QUICK) as app:
        owners = owner_book(app, console)
        await attach_gchat(app, endpoint=endpoint, owners=owners)
        url = f"{app.web_url}/gchat/events"
        first = ChatUser(google, url, PROJECT_NUMBER, email=OWNER_EMAIL, space=SPACE)
        other = ChatUser(google, url, PROJECT_NUMBER, email=STRANGER_EMAIL, space="spaces/OTHER")
        yield app, console, first, other


def answered(answer: object) -> str:
    message = getattr(answer, "message", None)
    return " ".join(texts(message)) if message else ""


async def test_the_first_verified_sender_of_the_code_becomes_the_chat_owner(
    google: FakeGoogle, tmp_path: Path
) -> None:
    settings = settings_for(google, tmp_path / "home", GCHAT_OWNER_EMAIL="")
    async with unowned(google, settings) as (app, console, first, other):
        [code] = CODE.findall(console.getvalue())
        unverified = await first.post(first.message_event(code)[0], authorization="Bearer x.y.z")
        asked = await first.say("hello")
        wrong = await other.say("ZZZZ-ZZZZ" if code != "ZZZZ-ZZZZ" else "YYYY-YYYY")
        paired = await first.say(code)
        help_ = await first.say("/help")
        late = await other.say(code)

    assert unverified.status == 401  # the bearer check stays in front of pairing
    assert "Send me the code shown where Lancelot runs" in answered(asked)
    assert "not the code" in answered(wrong)
    assert "you are now my owner on Google Chat" in answered(paired)
    assert "/status" in answered(help_)  # a command is answered: the owner now
    assert (late.status, late.body) == (200, {})  # a stranger after pairing: nothing

    async with unowned(google, settings) as (app, console, first, _):
        status = await first.say("/status")
        await app.drain()
    assert CODE.findall(console.getvalue()) == []
    pushed = [m for m in google.in_space(SPACE) if m.via != "answer"]
    assert any(f"Google Chat: {OWNER_EMAIL}" in " ".join(texts(m.body)) for m in pushed)
    assert status.status == 200
