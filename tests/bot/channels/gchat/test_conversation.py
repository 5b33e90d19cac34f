"""The owner talks to Lancelot in Google Chat, in both event formats; strangers reach nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.commands.registry import PressContext, Router
from core.events import Button, Card, CardKind
from tests.fakes.gchat import FakeGoogle, texts
from tests.fakes.gchat.user import Format

from .harness import OWNER_EMAIL, SPACE, running, settings_for


@pytest.mark.parametrize("fmt", ["classic", "addon"])
async def test_start_and_status_are_answered_in_the_events_own_format(
    google: FakeGoogle, tmp_path: Path, fmt: Format
) -> None:
    async with running(google, settings_for(google, tmp_path / "home")) as lancelot:
        start = await lancelot.owner.say("/start", fmt)
        status = await lancelot.owner.say("/status", fmt)

    assert start.status == 200
    assert start.kind == "NEW_MESSAGE"
    if fmt == "classic":
        assert start.body["actionResponse"] == {"type": "NEW_MESSAGE"}
    else:
        assert "createMessageAction" in start.body["hostAppDataAction"]["chatDataAction"]
    assert start.message is not None
    assert any(t.startswith("Hello, I'm Lancelot") for t in texts(start.message))
    assert start.message["cardsV2"][0]["card"]["header"]["title"]
    # /status carries a button (Crusader on): it is pushed, so a tap can edit it later; the
    # event itself is answered with nothing.
    assert status.status == 200
    assert status.message is None
    [pushed] = [m for m in google.in_space(SPACE) if m.via != "answer"]
    assert any("Uptime" in t or "uptime" in t for t in texts(pushed.body))
    assert google.in_space(SPACE)[0].via == "answer"  # /start rode on its event


async def test_the_mention_is_not_part_of_the_command(google: FakeGoogle, tmp_path: Path) -> None:
    async with running(google, settings_for(google, tmp_path / "home")) as lancelot:
        event, _ = lancelot.owner.message_event("/help")
        event["message"]["text"] = "@Lancelot /help"
        event["message"]["argumentText"] = " /help"
        answer = await lancelot.owner.post(event)

    assert answer.message is not None
    assert any("/run" in t for t in texts(answer.message))


@pytest.mark.parametrize("fmt", ["classic", "addon"])
async def test_a_stranger_reaches_nothing(google: FakeGoogle, tmp_path: Path, fmt: Format) -> None:
    async with running(google, settings_for(google, tmp_path / "home")) as lancelot:
        for _ in range(3):
            answer = await lancelot.stranger.say("/run ls", fmt)
            assert (answer.status, answer.body) == (200, {})
        inbound = await lancelot.receipts("inbound")
        refused = await lancelot.receipts("stranger")

    assert inbound == []
    assert google.messages == {}
    assert len(refused) == 1  # bounded: one receipt per stranger per hour
    assert '"channel":"gchat"' in refused[0].inputs


async def test_added_to_space_greets_the_owner(google: FakeGoogle, tmp_path: Path) -> None:
    async with running(google, settings_for(google, tmp_path / "home")) as lancelot:
        answer = await lancelot.owner.post(
            {
                "type": "ADDED_TO_SPACE",
                "space": {"name": SPACE, "spaceType": "DIRECT_MESSAGE"},
                "user": {"name": "users/1", "email": lancelot.owner.email, "type": "HUMAN"},
            }
        )
        removed = await lancelot.owner.post(
            {
                "type": "REMOVED_FROM_SPACE",
                "space": {"name": SPACE},
                "user": {"name": "users/1", "email": lancelot.owner.email, "type": "HUMAN"},
            }
        )

    assert answer.message is not None
    assert any(t.startswith("Hello, I'm Lancelot") for t in texts(answer.message))
    assert (removed.status, removed.body) == (200, {})


async def test_a_body_that_is_no_event_gets_400(google: FakeGoogle, tmp_path: Path) -> None:
    async with running(google, settings_for(google, tmp_path / "home")) as lancelot:
        answer = await lancelot.owner.post({"hello": "world"})
        refused = await lancelot.receipts("webhook")

    assert answer.status == 400
    assert [r.action_name for r in refused] == ["malformed"]


async def test_a_strangers_click_spends_nothing(google: FakeGoogle, tmp_path: Path) -> None:
    pressed: list[str] = []

    async def on_press(ctx: PressContext) -> Card:
        pressed.append(ctx.event.sender_id)
        return Card(kind=CardKind.NOTICE, title="Done", correlation_id=ctx.card_id)

    demo = Router("demo")
    demo.action("demo", on_press)

    settings = settings_for(google, tmp_path / "home")
    async with running(google, settings, routers=[demo]) as lancelot:
        token = await lancelot.app.tokens.issue("demo", {}, "card-9")
        card = Card(
            kind=CardKind.NOTICE,
            title="Pick",
            buttons=(Button("Go", token),),
            correlation_id="card-9",
        )
        await lancelot.app.bus.send("gchat", SPACE, card)
        [shown] = google.in_space(SPACE)
        lancelot.stranger.space = SPACE  # someone else in the same space
        refused = await lancelot.stranger.click(shown, "Go")
        accepted = await lancelot.owner.click(shown, "Go")

    assert (refused.status, refused.body) == (200, {})
    assert accepted.kind == "UPDATE_MESSAGE"
    assert pressed == [OWNER_EMAIL]
    assert texts(shown.body)[0] == "Done"
