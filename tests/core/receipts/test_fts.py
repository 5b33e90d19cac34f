"""The owner's words as a safe FTS5 query (core/receipts/fts.py): cut where the index's
tokenizer cuts them (which characters belong to a word is asked of SQLite), at most eight
words of at most 256 characters, a trailing `*` a prefix search from three characters on;
and such a query finds the receipts that hold the words."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from core.receipts import fts
from core.receipts.fts import fts_expression, is_token_char, terms
from core.receipts.ledger import SqliteLedger
from core.receipts.model import Receipt
from tests.fakes.processes import forked


def test_words_are_cut_where_the_tokenizer_cuts_them() -> None:
    assert terms("tool_run my-notes a·b café") == [
        ("tool", False),
        ("run", False),
        ("my", False),
        ("notes", False),
        ("a", False),
        ("b", False),
        ("café", False),
    ]


def test_which_characters_beyond_ascii_belong_to_a_word_is_sqlites_answer() -> None:
    assert all(is_token_char(char) for char in ("é", "ß", "中", "\u0301"))  # a combining mark
    assert not any(is_token_char(char) for char in ("·", "\u00a0", "—"))
    assert not is_token_char("\x00")
    assert terms("x\ud800y\x00z") == [("x", False), ("y", False), ("z", False)]


def first_question(text: str) -> str:
    """terms(text), asked in a forked child of a freshly loaded fts.py (its probe never
    asked before): what it answered, or what it raised, named."""
    return forked(lambda: repr(importlib.reload(fts).terms(text)))


@pytest.mark.parametrize("point", [0xD800, 0xDFFF], ids=["first", "last"])
def test_a_lone_surrogate_is_no_word_even_when_asked_about_first(point: int) -> None:
    # UTF-8 cannot carry a lone surrogate to SQLite: given one as the probe's first question
    # it raised (later ones only fail to parse), so it is never asked.
    assert first_question(f"x{chr(point)}y") == "[('x', False), ('y', False)]"


def test_a_star_makes_a_prefix_search_from_three_characters_on() -> None:
    assert fts_expression("back* bac* ba* x") == '"back"* AND "bac"* AND "ba" AND "x"'
    assert terms("back*up") == [("back", True), ("up", False)]
    assert terms("back *") == [("back", False)]  # the star must end the word


def test_at_most_eight_words_each_cut_to_256_characters() -> None:
    words = " ".join("abcdefghijkl")
    assert [word for word, _ in terms(words)] == list("abcdefgh")
    assert terms("a b c d e f g h* i")[-1] == ("h", True)  # the eighth keeps its star
    assert terms("a b c d e f g h")[-1] == ("h", False)
    long = "x" * 300
    assert terms(long) == [("x" * 256, False)]
    assert terms(long + " y") == [("x" * 256, False), ("y", False)]


def test_text_without_a_word_is_no_query() -> None:
    assert fts_expression("") is None
    assert fts_expression("  -- ** ") is None


async def test_such_a_query_finds_the_receipts_that_hold_the_words(tmp_path: Path) -> None:
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        ledger.append(Receipt("command", "notes", inputs={"file": "my-notes.txt"}))
        ledger.append(Receipt("command", "backup", inputs={"file": "café·menu"}))
        await ledger.flush_search()
        assert await ledger.count_matching("my-notes", 10) == 1  # two words, no phrase
        assert await ledger.count_matching("café·menu", 10) == 1
        assert await ledger.count_matching("back*", 10) == 1
        assert await ledger.count_matching("back", 10) == 0  # a whole word unless starred
        assert await ledger.count_matching("command", 10) == 2
