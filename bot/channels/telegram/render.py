"""Cards as Telegram messages: escaped HTML, split at 4096 characters, and inline keyboards.

A card is first laid out as plain text with bold spans (title, field labels) and code spans
(what a card's text puts between backticks, shown in monospace, the backticks dropped: on a
phone they read as stray marks). A long card is
cut in that plain text, at a paragraph, else a line, else a space, and only then is each
piece escaped and tagged, so no cut can fall inside a tag or an entity.
"""

from __future__ import annotations

import html
import logging
import re
from dataclasses import dataclass
from functools import lru_cache

from telegram import InlineKeyboardButton, InlineKeyboardMarkup

from core.events import Card

log = logging.getLogger(__name__)

MESSAGE_LIMIT = 4096  # characters after entity parsing, counted in UTF-16 code units
CALLBACK_DATA_LIMIT = 64  # bytes
BUTTONS_PER_ROW = 3
EMPTY_CARD = "(no content)"
ELLIPSIS = "\n…"
_BREAKS = ("\n\n", "\n", " ")

Span = tuple[str, str]  # (text, its HTML tag: "b", "code" or "" for none)
CODE = re.compile(r"`([^`\n]+)`")  # `lancelot setup`, as cards write a command or a path


@dataclass(frozen=True, slots=True)
class Chunk:
    """One message's worth of a card: as HTML, and as plain text (the fallback)."""

    html: str
    plain: str


def utf16_len(text: str) -> int:
    """Length as Telegram counts it."""
    return len(text.encode("utf-16-le")) // 2


def layout(card: Card) -> list[Span]:
    """The card as plain text spans: bold title, bold field labels, then the body."""
    spans: list[Span] = []
    if card.title.strip():
        spans.append((card.title.strip(), "b"))
    if card.fields:
        if spans:
            spans.append(("\n\n", ""))
        for index, (label, value) in enumerate(card.fields):
            if index:
                spans.append(("\n", ""))
            spans.append((f"{label}: ", "b"))
            spans.extend(_with_code(value))
    body = card.body.strip()
    if body:
        if spans:
            spans.append(("\n\n", ""))
        spans.extend(_with_code(body))
    return spans or [(EMPTY_CARD, "")]


def _with_code(text: str) -> list[Span]:
    """`text` as plain spans and code spans (each `quoted` part, without its backticks)."""
    spans: list[Span] = []
    position = 0
    for match in CODE.finditer(text):
        if match.start() > position:
            spans.append((text[position : match.start()], ""))
        spans.append((match.group(1), "code"))
        position = match.end()
    if position < len(text):
        spans.append((text[position:], ""))
    return spans


@lru_cache(maxsize=64)
def chunks(card: Card, limit: int = MESSAGE_LIMIT) -> tuple[Chunk, ...]:
    """The messages a card takes, in order (deterministic: the outbox relies on it)."""
    spans = layout(card)
    plain = "".join(text for text, _ in spans)
    return tuple(
        Chunk(_html(spans, start, end), plain[start:end].strip())
        for start, end in _cuts(plain, limit)
    ) or (Chunk(EMPTY_CARD, EMPTY_CARD),)


def edit_chunk_of(card: Card) -> Chunk:
    """What an edit shows: an edit replaces one message, so a long card is cut short."""
    pieces = chunks(card, MESSAGE_LIMIT - len(ELLIPSIS))
    if len(pieces) == 1:
        return pieces[0]
    return Chunk(pieces[0].html + ELLIPSIS, pieces[0].plain + ELLIPSIS)


def _cuts(plain: str, limit: int) -> list[tuple[int, int]]:
    cuts: list[tuple[int, int]] = []
    start = 0
    while True:
        while start < len(plain) and plain[start].isspace():
            start += 1
        if start >= len(plain):
            return cuts
        end = _fit(plain, start, limit)
        if end < len(plain):
            end = _boundary(plain, start, end)
        if plain[start:end].strip():
            cuts.append((start, end))
        start = end


def _fit(plain: str, start: int, limit: int) -> int:
    """The furthest end such that plain[start:end] fits in `limit` UTF-16 units."""
    end = min(len(plain), start + limit)
    over = utf16_len(plain[start:end]) - limit
    while over > 0:
        end -= max(1, over // 2)
        over = utf16_len(plain[start:end]) - limit
    return end


def _boundary(plain: str, start: int, end: int) -> int:
    """Pull a cut back to the last paragraph, line or word break in the second half."""
    window = plain[start:end]
    for brk in _BREAKS:
        at = window.rfind(brk)
        if at > len(window) // 2:
            return start + at
    return end


def _html(spans: list[Span], start: int, end: int) -> str:
    out: list[str] = []
    position = 0
    for text, tag in spans:
        lo, hi = max(start, position), min(end, position + len(text))
        if lo < hi:
            piece = html.escape(text[lo - position : hi - position], quote=False)
            out.append(f"<{tag}>{piece}</{tag}>" if tag and piece.strip() else piece)
        position += len(text)
    return "".join(out).strip()


def keyboard(card: Card) -> InlineKeyboardMarkup | None:
    """Action buttons (callback_data = the opaque token) in rows of three; links below."""
    actions = []
    for button in card.buttons:
        if button.url:
            continue
        if not 1 <= len(button.action_token.encode()) <= CALLBACK_DATA_LIMIT:
            log.error("button %r dropped: its token does not fit Telegram's 64 bytes", button.label)
            continue
        actions.append(InlineKeyboardButton(button.label, callback_data=button.action_token))
    rows = [actions[i : i + BUTTONS_PER_ROW] for i in range(0, len(actions), BUTTONS_PER_ROW)]
    rows += [[InlineKeyboardButton(b.label, url=b.url)] for b in card.buttons if b.url]
    return InlineKeyboardMarkup(rows) if rows else None


def without_links(markup: InlineKeyboardMarkup | None) -> InlineKeyboardMarkup | None:
    """The same keyboard minus URL buttons (Telegram refuses some URLs, such as localhost)."""
    if markup is None:
        return None
    rows = [[b for b in row if b.url is None] for row in markup.inline_keyboard]
    rows = [row for row in rows if row]
    return InlineKeyboardMarkup(rows) if rows else None
