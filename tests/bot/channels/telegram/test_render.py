"""Cards as Telegram HTML: escaped, bold where it should be, split where a reader would."""

from __future__ import annotations

import pytest

from bot.channels.telegram.render import MESSAGE_LIMIT, chunks, edit_chunk_of, keyboard, utf16_len
from core.events import Button, Card, CardKind
from tests.fakes.telegram.html_check import format_text


def card(body: str = "", title: str = "Title", **extra: object) -> Card:
    return Card(kind=CardKind.REPLY, title=title, body=body, **extra)  # type: ignore[arg-type]


def test_everything_is_escaped_and_the_labels_are_bold() -> None:
    [chunk] = chunks(card("1 < 2 & 3 > 2", title="<b>not bold</b>", fields=(("A&B", "<i>"),)))

    shown = format_text(chunk.html, "HTML")
    assert shown.text == "<b>not bold</b>\n\nA&B: <i>\n\n1 < 2 & 3 > 2"
    assert [e["type"] for e in shown.entities] == ["bold", "bold"]
    assert chunk.plain == shown.text


def test_a_long_body_is_cut_at_paragraphs_then_lines() -> None:
    paragraphs = [f"p{i} " + "y" * 1500 for i in range(6)]
    pieces = chunks(card("\n\n".join(paragraphs)))

    assert len(pieces) == 3
    assert pieces[1].plain.startswith("p2 ")  # two paragraphs fit in each message
    lines = "\n".join(f"line {i} " + "z" * 90 for i in range(200))
    for piece in chunks(card(lines)):
        assert piece.plain.splitlines()[-1].endswith("z" * 90)  # no line cut in half


@pytest.mark.parametrize("run", ["&" * 9000, "é" * 9000, "😀" * 5000, "<>" * 4000])
def test_an_unbreakable_run_is_cut_without_breaking_an_entity(run: str) -> None:
    pieces = chunks(card(run))

    assert len(pieces) > 1
    for piece in pieces:
        shown = format_text(piece.html, "HTML")  # raises on a broken tag or entity
        assert shown.text == piece.plain
        assert utf16_len(shown.text) <= MESSAGE_LIMIT
    assert "".join(p.plain for p in pieces) == "Title\n\n" + run


def test_cards_split_the_same_way_every_time() -> None:
    body = "\n\n".join("w " * 700 for _ in range(10))
    assert chunks(card(body)) == chunks(card(body + ""))
    assert (
        len({len(chunks(Card(kind=CardKind.REPLY, title="T", body=body))) for _ in range(3)}) == 1
    )


def test_an_edit_of_a_long_card_is_cut_short_with_an_ellipsis() -> None:
    chunk = edit_chunk_of(card("word " * 3000))
    assert chunk.plain.endswith("\n…")
    assert utf16_len(format_text(chunk.html, "HTML").text) <= MESSAGE_LIMIT


def test_an_empty_card_still_says_something() -> None:
    [chunk] = chunks(Card(kind=CardKind.NOTICE, title=" "))
    assert chunk.plain == "(no content)"


def test_buttons_become_a_keyboard_with_links_on_their_own_rows() -> None:
    markup = keyboard(
        card(
            buttons=(
                Button("Approve", "a" * 32),
                Button("Deny", "d" * 32),
                Button("Open", url="https://example.com/"),
                Button("Too long", "x" * 65),
            )
        )
    )

    assert markup is not None
    rows = [[(b.text, b.callback_data, b.url) for b in row] for row in markup.inline_keyboard]
    assert rows == [
        [("Approve", "a" * 32, None), ("Deny", "d" * 32, None)],
        [("Open", None, "https://example.com/")],
    ]
    assert keyboard(card()) is None


def test_backticks_become_monospace_not_stray_marks() -> None:
    card = Card(
        CardKind.REPLY,
        "Setup",
        "Run `lancelot setup` in the terminal, then `a<b`. A lone ` stays.",
        fields=(("Path", "`/workspace/notes.md`"),),
    )
    (chunk,) = chunks(card)
    assert "<code>lancelot setup</code>" in chunk.html
    assert "<code>a&lt;b</code>" in chunk.html  # escaped inside the tag too
    assert "<code>/workspace/notes.md</code>" in chunk.html
    assert "A lone ` stays." in chunk.html
    assert "`lancelot" not in chunk.plain  # the plain fallback drops the marks as well
    assert "Run lancelot setup in the terminal" in chunk.plain


def test_code_spans_parse_as_telegram_parses_them() -> None:
    (chunk,) = chunks(card("Type `/undo` or `lancelot setup`."))
    shown = format_text(chunk.html, "HTML")
    assert shown.text == "Title\n\nType /undo or lancelot setup."
    assert [e["type"] for e in shown.entities] == ["bold", "code", "code"]
    assert chunk.plain == shown.text
