"""Onboarding through the fake Bot API: the owner's first /start, a button tapped on the
phone, a restart in the middle, and a key typed in chat refused."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.telegram import FakeTelegram

from .harness import eventually, running, settings_for


async def test_onboarding_on_telegram_resumes_after_a_restart(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    settings = settings_for(tg, tmp_path / "home")
    async with running(tg, settings) as lancelot:
        greeting = await lancelot.say("/start")
        assert greeting["plain_text"].startswith("Hello, I'm Lancelot")
        assert "What should I call you?" in greeting["plain_text"]
        provider = await lancelot.say("Ana")
        assert provider["plain_text"].startswith("Step 2 of 4: the model provider")
        markup = provider["reply_markup"]
        assert markup is not None
        [buttons] = markup["inline_keyboard"]
        assert [b["text"] for b in buttons] == ["Continue"]
        before = len(tg.sent)
        tg.press_button(provider["message_id"], buttons[0]["callback_data"])
        [timezone] = (await tg.wait_for_sent(before + 1))[before:]
        assert timezone["plain_text"].startswith("Step 3 of 4: your timezone")
        await eventually(lambda: provider["edits"] >= 1)  # its buttons gone
    async with running(tg, settings) as lancelot:
        refused = await lancelot.say("my key: sk-proj-" + "x9" * 20)
        assert "stays in the chat history" in refused["plain_text"]
        channels = await lancelot.say("Europe/Paris")  # the question asked before the restart
        assert channels["plain_text"].startswith("Step 4 of 4: the channels")
        assert "You are talking to me on telegram." in channels["plain_text"]
        done = await lancelot.say("DONE")
        assert done["plain_text"].startswith("Onboarding done")
        assert "Europe/Paris" in done["plain_text"]
        health = await lancelot.say("/health")
        assert "DONE" in health["plain_text"]
