"""Cards as Google Chat messages: cardsV2 with a header, fields, escaped text and buttons.

Card text in Chat is a small HTML subset, so everything the core wrote is escaped (and line
breaks become <br>). A message must stay under 32,000 bytes: a long body is cut, at a
paragraph, else a line, else a space, into several messages; the first carries the header and
fields, the last the buttons. The cut is deterministic, so the outbox can resume at any part.
"""

from __future__ import annotations

import html
import json
from bisect import bisect_right
from dataclasses import dataclass
from functools import lru_cache
from itertools import accumulate
from typing import Any

from core.events import Card

MESSAGE_LIMIT = 32_000  # bytes, Google's cap for a message (text and cards together)
SAFETY = 1_000  # bytes kept free for what the platform adds around our JSON
TITLE_LIMIT = 200
FIELD_LIMIT = 1_000
MAX_FIELDS = 20
EMPTY_BODY = "(no content)"
ELLIPSIS = "\n…"
_BREAKS = ("\n\n", "\n", " ")

TOKEN_PARAMETER = "token"  # noqa: S105 (a parameter name)
CARD_PARAMETER = "card"
CLASSIC_FUNCTION = "lancelot.press"

Message = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Style:
    """How buttons call back: the action function (the endpoint URL for add-ons) and whether
    the message can carry action buttons at all (an incoming webhook's cannot)."""

    function: str = CLASSIC_FUNCTION
    actions: bool = True


def escape(text: str) -> str:
    """Text as Chat's card HTML shows it literally."""
    return html.escape(text, quote=False).replace("\n", "<br>")


class _CharCosts(dict[str, int]):
    """Bytes each character takes once escaped and JSON-encoded (as Chat counts the
    message), computed once per character; a plain dict lookup keeps long cards fast."""

    def __missing__(self, char: str) -> int:
        cost = len(json.dumps(escape(char), ensure_ascii=False).encode()) - 2
        if len(self) < 65_536:  # bounded, whatever text arrives
            self[char] = cost
        return cost


_CHAR_COSTS = _CharCosts()


def encoded_size(message: Message) -> int:
    """The message's size in bytes as sent."""
    return len(json.dumps(message, ensure_ascii=False).encode())


def split_body(text: str, budget: int) -> list[str]:
    """Cut `text` into pieces whose escaped size is at most `budget` bytes each."""
    # totals[i] is the escaped size of text[:i]: each piece is found by bisection.
    totals = list(accumulate(map(_CHAR_COSTS.__getitem__, text), initial=0))
    pieces: list[str] = []
    start, end = 0, len(text)
    while start < end:
        if text[start].isspace():
            start += 1
            continue
        limit = bisect_right(totals, totals[start] + budget) - 1
        if limit >= end:
            pieces.append(text[start:].rstrip())
            break
        cut = _break_before(text, start, max(limit, start + 1))
        pieces.append(text[start:cut].rstrip())
        start = cut
    return [piece for piece in pieces if piece] or [""]


def _break_before(text: str, start: int, limit: int) -> int:
    for mark in _BREAKS:
        at = text.rfind(mark, start, limit)
        if at > start + (limit - start) // 2:
            return at + len(mark)
    return limit


def _header(card: Card) -> dict[str, str]:
    title = card.title.strip()[:TITLE_LIMIT] or card.kind.value.capitalize()
    return {"title": title, "subtitle": f"Lancelot · {card.kind.value}"}


def _fields(card: Card) -> list[dict[str, Any]]:
    return [
        {"decoratedText": {"topLabel": label[:TITLE_LIMIT], "text": escape(value[:FIELD_LIMIT])}}
        for label, value in card.fields[:MAX_FIELDS]
    ]


def _buttons(card: Card, style: Style) -> list[dict[str, Any]]:
    buttons: list[dict[str, Any]] = []
    for button in card.buttons:
        if button.url:
            buttons.append({"text": button.label, "onClick": {"openLink": {"url": button.url}}})
        elif style.actions:
            parameters = [
                {"key": TOKEN_PARAMETER, "value": button.action_token},
                {"key": CARD_PARAMETER, "value": card.correlation_id},
            ]
            action = {"function": style.function, "parameters": parameters}
            buttons.append({"text": button.label, "onClick": {"action": action}})
    return buttons


def _message(card: Card, body: str, *, first: bool, last: bool, style: Style) -> Message:
    widgets: list[dict[str, Any]] = list(_fields(card)) if first else []
    if body or not widgets:
        widgets.append({"textParagraph": {"text": escape(body or EMPTY_BODY)}})
    if last and card.buttons and not style.actions and any(not b.url for b in card.buttons):
        note = "Decide from Lancelot's Chat app or another channel."
        widgets.append({"textParagraph": {"text": escape(note)}})
    buttons = _buttons(card, style) if last else []
    if buttons:
        widgets.append({"buttonList": {"buttons": buttons}})
    inner: dict[str, Any] = {"sections": [{"widgets": widgets}]}
    if first:
        inner["header"] = _header(card)
    return {
        "fallbackText": _header(card)["title"],
        "cardsV2": [{"cardId": card.correlation_id[:64] or "card", "card": inner}],
    }


# The split must not depend on how the card is sent (API, webhook, classic or add-on), so
# the overhead is measured with a style at least as large as any real one.
_MEASURE = Style(function="f" * 512, actions=True)
_NOTE_ROOM = 256


def _budget(card: Card) -> int:
    overhead = encoded_size(_message(card, "", first=True, last=True, style=_MEASURE))
    return max(MESSAGE_LIMIT - SAFETY - _NOTE_ROOM - overhead, 1_000)


def messages(card: Card, style: Style = Style()) -> list[Message]:
    """The card as one or more messages, each under MESSAGE_LIMIT bytes."""
    pieces = _pieces(card)
    last = len(pieces) - 1
    return [
        _message(card, piece, first=i == 0, last=i == last, style=style)
        for i, piece in enumerate(pieces)
    ]


@lru_cache(maxsize=64)
def _pieces(card: Card) -> tuple[str, ...]:
    # The outbox asks for a long card's parts one at a time: cut it once.
    return tuple(split_body(card.body.strip(), _budget(card)))


def single_message(card: Card, style: Style = Style()) -> Message:
    """The card as one message (an edit replaces one message): a body too long is cut short."""
    body = card.body.strip()
    pieces = _pieces(card)
    if len(pieces) > 1:
        body = split_body(pieces[0], _budget(card) - 16)[0] + ELLIPSIS
    return _message(card, body, first=True, last=True, style=style)
