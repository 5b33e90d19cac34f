"""The scenario: an approval asked in Google Chat, decided by a tap, the card replaced in
place, the Telegram copy edited too, the file gone, the receipt naming the channel; and a
decision in Telegram editing the Google Chat copy."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.gchat import FakeGoogle, StoredMessage, buttons, texts
from tests.fakes.gchat.user import Format
from tests.fakes.telegram import FakeTelegram

from .harness import OWNER_EMAIL, SPACE, Running, running, settings_for

QUICK_ANSWER = "0.5"  # seconds: /run answers with the pushed card, not in the HTTP answer


async def ask_approval(lancelot: Running, tg: FakeTelegram, fmt: Format) -> StoredMessage:
    """The owner asks to delete notes.txt; returns the approval card as Chat shows it."""
    (lancelot.workspace / "notes.txt").write_text("shopping list")
    answer = await lancelot.owner.say("/run rm notes.txt", fmt)
    assert answer.status == 200
    google = lancelot.google
    await google.wait_for(lambda: any(buttons(m.body) for m in google.in_space(SPACE)))
    await tg.wait_for_sent(1)
    [card] = [m for m in google.in_space(SPACE) if buttons(m.body)]
    return card


@pytest.mark.parametrize("fmt", ["classic", "addon"])
async def test_approve_in_google_chat_updates_both_copies_and_runs_once(
    google: FakeGoogle, tg: FakeTelegram, tmp_path: Path, fmt: Format
) -> None:
    settings = settings_for(
        google, tmp_path / "home", tg=tg, LANCELOT_GCHAT_REPLY_WAIT_SECONDS=QUICK_ANSWER
    )
    async with running(google, settings, tg=tg) as lancelot:
        card = await ask_approval(lancelot, tg, fmt)
        assert card.via == "api"  # pushed, so it has a name Telegram's decision could edit
        assert [b["text"] for b in buttons(card.body)] == ["Approve", "Deny"]
        assert any("rm notes.txt" in t for t in texts(card.body))
        [tg_copy] = tg.sent
        assert tg_copy["reply_markup"] is not None

        answer = await lancelot.owner.click(card, "Approve", fmt)
        await tg.wait_for(lambda: tg.sent[0]["edits"] == 1)
        replay = await lancelot.owner.click_event_post(card, "Approve", fmt)
        granted = await lancelot.receipts("approval_granted")
        presses = await lancelot.receipts("button")

    assert answer.kind == "UPDATE_MESSAGE"
    assert card.edits == 1  # replaced in place by the answer to the click
    assert [b["text"] for b in buttons(card.body)] == ["Undo"]  # the change can be taken back
    shown = "\n".join(texts(card.body))
    assert f"Approved by {OWNER_EMAIL}" in shown
    assert "via gchat" in shown
    assert not (lancelot.workspace / "notes.txt").exists()
    assert [b["text"] for b in tg.sent[0]["reply_markup"]["inline_keyboard"][0]] == ["Undo"]
    assert f"Approved by {OWNER_EMAIL}" in tg.sent[0]["plain_text"]
    assert len(granted) == 1
    assert f"approved by {OWNER_EMAIL} via gchat" in granted[0].outputs
    assert '"channel":"gchat"' in presses[0].metadata
    assert replay.kind == "NEW_MESSAGE"  # a second tap: "Button not accepted", nothing runs
    assert replay.message is not None
    assert any("no longer valid" in t for t in texts(replay.message))


async def test_a_decision_in_telegram_edits_the_google_chat_copy(
    google: FakeGoogle, tg: FakeTelegram, tmp_path: Path
) -> None:
    settings = settings_for(
        google, tmp_path / "home", tg=tg, LANCELOT_GCHAT_REPLY_WAIT_SECONDS=QUICK_ANSWER
    )
    async with running(google, settings, tg=tg) as lancelot:
        card = await ask_approval(lancelot, tg, "classic")
        [tg_copy] = tg.sent
        deny = tg_copy["reply_markup"]["inline_keyboard"][0][1]  # type: ignore[index]
        assert deny["text"] == "Deny"
        tg.press_button(tg_copy["message_id"], deny["callback_data"])
        await google.wait_for(lambda: card.edits == 1)
        late = await lancelot.owner.click(card, "Approve") if buttons(card.body) else None

    assert late is None  # the Chat copy lost its buttons: the first decision won
    assert any("Denied" in t for t in texts(card.body))
    assert (lancelot.workspace / "notes.txt").exists()
    assert [c[0] for c in google.calls].count("update") == 1


async def test_without_push_the_approval_rides_on_the_answer_and_a_click_updates_it(
    google: FakeGoogle, tmp_path: Path
) -> None:
    settings = settings_for(google, tmp_path / "home", api=False, GCHAT_SPACE="")
    async with running(google, settings) as lancelot:
        (lancelot.workspace / "notes.txt").write_text("shopping list")
        answer = await lancelot.owner.say("/run rm notes.txt")
        assert answer.shown is not None
        assert [b["text"] for b in buttons(answer.shown.body)] == ["Approve", "Deny"]
        decided = await lancelot.owner.click(answer.shown, "Deny")

    assert decided.kind == "UPDATE_MESSAGE"
    assert any("Denied" in t for t in texts(answer.shown.body))
    assert (lancelot.workspace / "notes.txt").exists()
    assert [m.via for m in google.in_space(SPACE)] == ["answer"]  # nothing was pushed
