"""Cards as Google Chat messages: cardsV2 layout, escaping, the 32,000-byte split."""

from __future__ import annotations

import pytest

from bot.channels.gchat import render
from bot.channels.gchat.events import EventFormat, EventKind, MalformedEvent, parse_event
from core.events import Button, Card, CardKind
from tests.fakes.gchat import buttons, texts
from tests.fakes.gchat.cards import check_message


def approval() -> Card:
    return Card(
        kind=CardKind.APPROVAL,
        title="Approve this T3 action?",
        body="rm <notes>.txt && echo *done*",
        fields=(("Runs", "shell"), ("Expires", "10:31 UTC")),
        buttons=(
            Button("Approve", "tok-a"),
            Button("Deny", "tok-d"),
            Button("Docs", url="https://x.test/"),
        ),
        correlation_id="approval-1",
    )


def test_a_card_has_a_header_fields_text_and_buttons_carrying_the_token() -> None:
    [message] = render.messages(approval())
    check_message(message)
    card = message["cardsV2"][0]
    assert card["cardId"] == "approval-1"
    assert card["card"]["header"]["title"] == "Approve this T3 action?"
    widgets = card["card"]["sections"][0]["widgets"]
    assert [next(iter(w)) for w in widgets] == [
        "decoratedText",
        "decoratedText",
        "textParagraph",
        "buttonList",
    ]
    approve, deny, docs = buttons(message)
    assert approve["onClick"]["action"] == {
        "function": render.CLASSIC_FUNCTION,
        "parameters": [{"key": "token", "value": "tok-a"}, {"key": "card", "value": "approval-1"}],
    }
    assert deny["onClick"]["action"]["parameters"][0]["value"] == "tok-d"
    assert docs["onClick"] == {"openLink": {"url": "https://x.test/"}}
    assert message["fallbackText"] == "Approve this T3 action?"


def test_text_is_escaped_for_chats_card_html() -> None:
    [message] = render.messages(approval())
    paragraph = message["cardsV2"][0]["card"]["sections"][0]["widgets"][2]["textParagraph"]
    assert paragraph["text"] == "rm &lt;notes&gt;.txt &amp;&amp; echo *done*"
    assert "rm <notes>.txt && echo *done*" in texts(message)
    assert render.escape("a\nb") == "a<br>b"


def test_add_on_buttons_call_the_endpoint_url_and_webhook_cards_have_no_action_buttons() -> None:
    url = "https://lancelot.example.test/gchat/events"
    [addon] = render.messages(approval(), render.Style(url))
    assert buttons(addon)[0]["onClick"]["action"]["function"] == url
    [hooked] = render.messages(approval(), render.Style(actions=False))
    assert [b["text"] for b in buttons(hooked)] == ["Docs"]


def test_a_long_card_splits_deterministically_under_the_limit() -> None:
    card = Card(kind=CardKind.REPLY, title="Log", body="x" * 50_000 + "\n" + 'é"\\' * 20_000)
    first, again = render.messages(card), render.messages(card)
    assert first == again
    assert len(first) >= 3
    for message in first:
        check_message(message)
        assert render.encoded_size(message) <= render.MESSAGE_LIMIT
    assert "header" in first[0]["cardsV2"][0]["card"]
    assert "header" not in first[1]["cardsV2"][0]["card"]
    edited = render.single_message(card)
    check_message(edited)
    assert texts(edited)[-1].endswith("…")


def test_slash_commands_keep_the_command_and_mentions_are_dropped() -> None:
    base = {"space": {"name": "spaces/A"}, "user": {"email": "Owner@Example.test"}}
    mention = parse_event(
        {
            **base,
            "type": "MESSAGE",
            "message": {"text": "@Lancelot /status", "argumentText": " /status"},
        }
    )
    slash = parse_event(
        {
            **base,
            "type": "MESSAGE",
            "message": {
                "text": "/run ls",
                "argumentText": " ls",
                "slashCommand": {"commandId": "1"},
            },
        }
    )
    assert (mention.text, mention.user_email, mention.kind) == (
        "/status",
        "owner@example.test",
        EventKind.MESSAGE,
    )
    assert slash.text == "/run ls"
    assert mention.format is EventFormat.CLASSIC


@pytest.mark.parametrize("body", [[], {"type": 3}, {"chat": "x"}, {"something": "else"}])
def test_what_is_not_an_event_is_refused(body: object) -> None:
    with pytest.raises(MalformedEvent):
        parse_event(body)
