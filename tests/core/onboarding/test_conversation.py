"""Onboarding in chat, as the owner lives it: /start, one question a message (name, model
provider, timezone, channels), the words that work at any step, and a restart in the middle."""

from __future__ import annotations

from pathlib import Path

from bot.app import Lancelot, assemble
from core.config import load_settings
from core.events import Card
from core.llm.providers import no_provider_answer
from core.memory.blocks import Block
from core.onboarding import cards
from tests.fakes.channel import MemoryChannel
from tests.fakes.owner import say, tap


async def _tap(app: Lancelot, phone: MemoryChannel, card: Card, label: str) -> Card:
    """Tap a button of a step's card; the card the tap sends next."""
    await tap(app, phone, card, label)
    _, card = await phone.next_card()
    return card


def _labels(card: Card) -> list[str]:
    return [b.label for b in card.buttons]


async def test_the_first_start_walks_through_every_step(
    app: Lancelot, phone: MemoryChannel
) -> None:
    assert app.memory is not None
    greeting = await say(app, phone, "/start")
    assert greeting.title == "Hello, I'm Lancelot"
    assert "Step 1 of 4: your name" in greeting.body
    assert "What should I call you?" in greeting.body

    provider = await say(app, phone, "Ana")
    assert provider.title == "Step 2 of 4: the model provider"
    assert "No model provider key is set" in provider.body
    assert "lancelot setup" in provider.body
    assert app.models.has_local() is False  # the tests' app has no local model: none is claimed
    assert "so for now I answer commands only" in provider.body
    assert "local model" not in provider.body
    assert _labels(provider) == ["Continue"]

    timezone = await _tap(app, phone, provider, "Continue")
    assert timezone.title == "Step 3 of 4: your timezone"
    assert _labels(timezone) == ["Keep UTC"]
    assert phone.edits[-1][1].body == "Chosen: continue"  # the tapped card, its buttons gone
    assert phone.edits[-1][1].buttons == ()

    channels = await say(app, phone, "paris")
    assert channels.title == "Step 4 of 4: the channels"
    assert "You are talking to me on memory." in channels.body
    telegram = "Telegram is not set up (set TELEGRAM_BOT_TOKEN, restart me, send the bot the code"
    assert telegram in channels.body
    assert "Google Chat is not set up" in channels.body
    assert _labels(channels) == ["Finish"]

    done = await _tap(app, phone, channels, "Finish")
    assert done.title == "Onboarding done"
    assert dict(done.fields) == {
        "Name": "Ana",
        "Model": "none (commands and the local model only)",
        "Timezone": "Europe/Paris",
    }
    assert app.alerts is not None
    assert (await app.health.snapshot()).onboarding_state == "DONE"
    health = await say(app, phone, "/health")
    assert dict(health.fields)["Onboarding"] == "DONE"
    human = (await app.memory.blocks())[Block.HUMAN]
    assert human.text == "Call the owner Ana."
    # Done: /start greets as usual, plain words go to the agent again.
    again = await say(app, phone, "/start")
    assert again.title.startswith("Hello, I'm Lancelot")
    assert "Step 1" not in again.body
    assert (await say(app, phone, "status")).title != "Onboarding"


async def test_a_bad_name_or_timezone_is_asked_again(app: Lancelot, phone: MemoryChannel) -> None:
    await say(app, phone, "/start")
    refused = await say(app, phone, "x" * 60)
    assert refused.title == "Step 1 of 4: your name"
    assert "can't use" in refused.body
    provider = await say(app, phone, "Ana")
    await _tap(app, phone, provider, "Continue")
    wrong = await say(app, phone, "Mars/Olympus_Mons")
    assert "I don't know the timezone 'Mars/Olympus_Mons'" in wrong.body
    assert app.memory is not None
    assert (await say(app, phone, "America/New_York")).title == "Step 4 of 4: the channels"


async def test_the_words_that_work_at_any_step(app: Lancelot, phone: MemoryChannel) -> None:
    await say(app, phone, "/start")
    await say(app, phone, "Ana")  # now at the provider step
    status = await say(app, phone, "STATUS")
    assert dict(status.fields)["Step"] == "Step 2 of 4: the model provider"
    assert dict(status.fields)["Name"] == "Ana"

    back = await say(app, phone, "back")
    assert back.title == "Step 1 of 4: your name"
    assert "(Now: Ana.)" in back.body
    assert "ASK AGAIN (this question again)" in back.body
    assert "RESEND CODE" not in back.body  # it read as "send the pairing code again"
    assert (await say(app, phone, "ask again")).title == "Step 1 of 4: your name"
    assert (await say(app, phone, "RESEND CODE")).title == "Step 1 of 4: your name"  # still heard
    restarted = await say(app, phone, "Restart step")
    assert restarted.title == "Step 1 of 4: your name"
    assert "Now:" not in restarted.body  # the answer to this step is forgotten
    assert (await say(app, phone, "Bea")).title == "Step 2 of 4: the model provider"

    reset = await say(app, phone, "RESET")
    assert reset.title == "Step 1 of 4: your name"
    status = await say(app, phone, "status")
    assert dict(status.fields)["Name"] == "(not yet)"
    # Commands still work in the middle of onboarding.
    assert (await say(app, phone, "/help")).title.startswith("Commands")

    skipped = await say(app, phone, "skip")
    assert skipped.title == "Onboarding skipped"
    assert dict(skipped.fields)["Timezone"] == "UTC"  # the settings' default stays
    assert (await app.health.snapshot()).onboarding_state == "SKIPPED"
    # After SKIP the words are plain words again; /start setup asks the questions again.
    assert (await say(app, phone, "/start setup")).title == "Hello, I'm Lancelot"


async def test_onboarding_resumes_after_a_restart_in_the_middle(tmp_path: Path) -> None:
    settings = load_settings(environ={"LANCELOT_HOME": str(tmp_path / "home")})
    async with assemble(settings, web=False) as app:
        phone = MemoryChannel()
        await app.attach(phone)
        await say(app, phone, "/start")
        provider = await say(app, phone, "Ana")
        await _tap(app, phone, provider, "Continue")  # now at the timezone step
    async with assemble(settings, web=False) as app:
        phone = MemoryChannel()
        await app.attach(phone)
        snapshot = await app.health.snapshot()
        assert snapshot.onboarding_state == "IN_PROGRESS: step 3 of 4 (your timezone)"
        assert (await say(app, phone, "Tokyo")).title == "Step 4 of 4: the channels"
        done = await say(app, phone, "done")
        assert dict(done.fields)["Name"] == "Ana"
        assert dict(done.fields)["Timezone"] == "Asia/Tokyo"
    async with assemble(settings, web=False) as app:
        assert (await app.health.snapshot()).onboarding_state == "DONE"


async def test_a_test_card_goes_to_the_other_channel(app: Lancelot, phone: MemoryChannel) -> None:
    other = MemoryChannel(name="gchat", owner_chat="spaces/owner")
    await app.attach(other)
    await say(app, phone, "/start")
    provider = await say(app, phone, "Ana")
    timezone = await _tap(app, phone, provider, "Continue")
    channels = await _tap(app, phone, timezone, "Keep UTC")
    assert "Google Chat is set up too" in channels.body
    assert _labels(channels) == ["Test card to Google Chat", "Finish"]
    sent = await _tap(app, phone, channels, "Test card to Google Chat")
    assert sent.title == "Test card sent"
    [(ref, card)] = other.delivered
    assert (ref.chat_id, card.title) == ("spaces/owner", "Test card from Lancelot")
    again = phone.edits[-1][1]  # the channels card, its buttons new (the tapped ones are spent)
    assert again.correlation_id == channels.correlation_id
    assert _labels(again) == ["Test card to Google Chat", "Finish"]
    assert (await _tap(app, phone, again, "Finish")).title == "Onboarding done"


async def test_an_owner_who_became_known_is_welcomed_once(
    app: Lancelot, phone: MemoryChannel
) -> None:
    """Pairing's hook: the first question goes to the chat of the owner just paired."""
    assert await app.onboarding.welcome(phone.name, "owner-chat", "Ana")
    _, card = await phone.next_card()
    assert card.title == "Hello, I'm Lancelot"
    assert _labels(card) == ["Call me Ana"]  # the name the platform gave, one tap away
    assert not await app.onboarding.welcome(phone.name, "owner-chat")  # begun already
    assert (await _tap(app, phone, card, "Call me Ana")).title == "Step 2 of 4: the model provider"
    status = await say(app, phone, "STATUS")
    assert dict(status.fields)["Name"] == "Ana"


def test_the_provider_step_claims_a_local_model_only_when_there_is_one() -> None:
    assert "use my local model" in cards.provider_body((), None, local=True)
    assert "local model" not in cards.provider_body((), None, local=False)
    assert "local model" not in no_provider_answer("no key")
    assert "lancelot setup" in no_provider_answer("no key")
    assert "my local model for small jobs" in no_provider_answer("no key", local=True)
