"""Button presses: every tap answered; only the owner's valid, fresh, first tap does anything."""

from __future__ import annotations

from pathlib import Path

from core.commands.registry import PressContext, Router
from core.events import Button, Card, CardKind
from tests.fakes.telegram import FakeTelegram

from .harness import OWNER, STRANGER, eventually, running, settings_for

NOT_VALID = "That button or link is no longer valid."


def count_presses() -> tuple[list[PressContext], list[Router]]:
    """The `demo` action, a router to include at assembly: it records the press and turns the card
    into "Done"."""
    seen: list[PressContext] = []

    async def on_press(ctx: PressContext) -> Card:
        seen.append(ctx)
        return Card(kind=CardKind.NOTICE, title="Done", correlation_id=ctx.card_id)

    demo = Router("demo")
    demo.action("demo", on_press)
    return seen, [demo]


async def test_a_press_acts_once_and_a_replay_is_refused(tg: FakeTelegram, tmp_path: Path) -> None:
    seen, routers = count_presses()
    async with running(tg, settings_for(tg, tmp_path), routers=routers) as lancelot:
        card, message = await lancelot.card_with_button()
        token = card.buttons[0].action_token
        first = tg.press_button(message["message_id"], token)
        replay = tg.press_button(message["message_id"], token)  # a double tap
        await eventually(lambda: len(tg.answered_callbacks) == 2)
        refused = await lancelot.receipts("button_refused")

    answers = {a["callback_query_id"]: a["text"] for a in tg.answered_callbacks}
    assert answers == {first: None, replay: NOT_VALID}
    assert len(seen) == 1
    [edited] = [m for m in tg.sent if m["message_id"] == message["message_id"]]
    assert edited["plain_text"] == "Done"
    assert edited["reply_markup"] is None  # buttons removed
    assert edited["edits"] == 1
    assert [r.action_name for r in refused] == ["already used"]


async def test_a_forged_button_changes_nothing(tg: FakeTelegram, tmp_path: Path) -> None:
    seen, routers = count_presses()
    async with running(tg, settings_for(tg, tmp_path), routers=routers) as lancelot:
        forged = Card(kind=CardKind.APPROVAL, title="Pick", buttons=(Button("Go", "A" * 32),))
        ref = await lancelot.app.bus.send("telegram", str(OWNER), forged)
        tg.press_button(int(ref.message_id), "A" * 32)
        await eventually(lambda: len(tg.answered_callbacks) == 1)
        refused = await lancelot.receipts("button_refused")

    assert tg.answered_callbacks[0]["text"] == NOT_VALID
    assert seen == []
    card = next(m for m in tg.sent if m["message_id"] == int(ref.message_id))
    assert (card["edits"], card["plain_text"]) == (0, "Pick")
    assert [r.action_name for r in refused] == ["forged"]


async def test_a_strangers_press_is_not_allowed_and_spends_nothing(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    seen, routers = count_presses()
    async with running(tg, settings_for(tg, tmp_path), routers=routers) as lancelot:
        card, message = await lancelot.card_with_button()
        token = card.buttons[0].action_token
        tg.press_button(message["message_id"], token, user_id=STRANGER, chat_id=OWNER)
        await eventually(lambda: len(tg.answered_callbacks) == 1)
        assert seen == []
        strangers = await lancelot.receipts("stranger")
        # The owner's own tap still works: the stranger spent nothing.
        tg.press_button(message["message_id"], token)
        await eventually(lambda: len(seen) == 1)

    assert tg.answered_callbacks[0]["text"] == "Not allowed"
    assert [r.action_name for r in strangers] == ["button"]
    assert tg.messages_in(STRANGER) == []


async def test_a_press_without_an_action_is_still_answered(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    async with running(tg, settings_for(tg, tmp_path)) as lancelot:
        card, message = await lancelot.card_with_button("nothing-handles-this")
        tg.press_button(message["message_id"], card.buttons[0].action_token)
        await eventually(lambda: len(tg.answered_callbacks) == 1)

    assert tg.answered_callbacks[0]["text"] is None  # accepted; the reply card says the rest
