"""Pushes that outlast the synchronous answer: the Chat API as the app (service account,
requestId, threads, edits) or an incoming webhook; 429 and 5xx retried without duplicates."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import DeliveryDeferred
from core.events import Button, Card, CardKind, MessageRef
from tests.bot.channels.telegram.harness import eventually
from tests.fakes.gchat import FakeGoogle, Fault, buttons, texts

from .harness import SPACE, running, settings_for


def alert(body: str = "Disk 91% full", **extra: object) -> Card:
    return Card(kind=CardKind.ALERT, title="Disk almost full", body=body, **extra)  # type: ignore[arg-type]


async def test_an_alert_is_pushed_through_the_api_in_an_alert_thread(
    google: FakeGoogle, tmp_path: Path
) -> None:
    async with running(google, settings_for(google, tmp_path / "home")) as lancelot:
        refs = await lancelot.app.bus.broadcast(alert())
        await lancelot.app.bus.broadcast(alert("Disk 95% full"))

    first, second = google.in_space(SPACE)
    assert [r.message_id for r in refs] == [first.name]
    assert (first.via, second.via) == ("api", "api")
    assert first.thread == second.thread  # both in the thread keyed "lancelot-alert"
    assert "Disk 91% full" in texts(first.body)
    assert first.request_id.startswith("lancelot-")
    assert first.request_id != second.request_id
    assert google.tokens_issued == 1  # the service account's token is reused


async def test_a_reply_that_outlasts_the_answer_is_pushed_into_the_owners_thread(
    google: FakeGoogle, tmp_path: Path
) -> None:
    settings = settings_for(google, tmp_path / "home", LANCELOT_GCHAT_REPLY_WAIT_SECONDS="0")
    async with running(google, settings) as lancelot:
        event, thread = lancelot.owner.message_event("/status")
        answer = await lancelot.owner.post(event)
        await google.wait_for(lambda: google.in_space(SPACE))

    assert (answer.status, answer.body) == (200, {})
    [pushed] = google.in_space(SPACE)
    assert pushed.via == "api"
    assert pushed.thread == thread
    assert any("Uptime" in t or "uptime" in t for t in texts(pushed.body))


async def test_429_and_a_lost_answer_are_retried_without_a_duplicate(
    google: FakeGoogle, tmp_path: Path
) -> None:
    google.faults.extend([Fault(429), Fault(503, after=True), Fault(429, retry_after="0")])
    card = alert()
    async with running(google, settings_for(google, tmp_path / "home")) as lancelot:
        with pytest.raises(DeliveryDeferred):  # queued durably; the outbox keeps trying
            await lancelot.app.bus.send("gchat", SPACE, card)

        def remembered() -> str | None:
            shown = google.in_space(SPACE)
            if len(google.calls) < 4 or not shown:
                return None
            return lancelot.app.bus.card_of(MessageRef("gchat", SPACE, shown[0].name))

        await eventually(remembered)

    creates = [c for c in google.calls if c[0] == "create"]
    [message] = google.in_space(SPACE)
    assert len(creates) == 4  # 429, made-but-lost 503, 429 (Retry-After), then the replay
    # Delivered once the platform named the message; the bus ties that name to the card.
    assert remembered() == card.correlation_id
    assert {c[2]["requestId"] for c in creates} == {message.request_id}


async def test_a_card_update_edits_the_pushed_message_in_place(
    google: FakeGoogle, tmp_path: Path
) -> None:
    async with running(google, settings_for(google, tmp_path / "home")) as lancelot:
        token = await lancelot.app.tokens.issue("demo", {}, "card-1")
        card = alert(buttons=(Button("Silence", token),), correlation_id="card-1")
        await lancelot.app.bus.send("gchat", SPACE, card)
        edited = await lancelot.app.bus.update("card-1", alert("Silenced until 10:00"))

    [message] = google.in_space(SPACE)
    assert edited >= 1
    assert message.edits == 1
    assert "Silenced until 10:00" in texts(message.body)
    assert buttons(message.body) == []
    assert [c[2]["updateMask"] for c in google.calls if c[0] == "update"] == ["text,cardsV2"]


async def test_long_text_is_split_across_messages_under_32000_bytes(
    google: FakeGoogle, tmp_path: Path
) -> None:
    paragraphs = [f"line {i}: " + "<&> ü " * 40 for i in range(200)]
    body = "\n".join(paragraphs)
    async with running(google, settings_for(google, tmp_path / "home")) as lancelot:
        token = await lancelot.app.tokens.issue("demo", {}, "long-1")
        card = alert(body, buttons=(Button("OK", token),), correlation_id="long-1")
        await lancelot.app.bus.send("gchat", SPACE, card)

    messages = google.in_space(SPACE)
    assert len(messages) >= 3  # the fake refuses any message over 32,000 bytes
    assert [len(buttons(m.body)) for m in messages] == [0] * (len(messages) - 1) + [1]
    shown = "\n".join(t for m in messages for t in texts(m.body) if t.startswith("line "))
    assert [line.rstrip() for line in shown.split("\n") if line] == [p.rstrip() for p in paragraphs]
    assert len({m.thread for m in messages}) == 1


async def test_push_only_through_an_incoming_webhook(google: FakeGoogle, tmp_path: Path) -> None:
    settings = settings_for(google, tmp_path / "home", api=False, webhook=True, GCHAT_AUDIENCE="")
    async with running(google, settings) as lancelot:
        token = await lancelot.app.tokens.issue("demo", {}, "hook-1")
        card = alert(buttons=(Button("Silence", token),), correlation_id="hook-1")
        refs = await lancelot.app.bus.broadcast(card)

    [message] = google.in_space(google.webhook_space)
    assert message.via == "webhook"
    assert [r.message_id for r in refs] == [f"webhook:{message.name}"]
    assert "Disk 91% full" in texts(message.body)
    assert buttons(message.body) == []  # nothing could receive a click from a webhook message
    assert any("another channel" in t for t in texts(message.body))
    assert google.webhook_key not in repr(refs)
