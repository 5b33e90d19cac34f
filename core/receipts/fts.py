"""Free text into a safe FTS5 query: the owner's words cut exactly where the index cuts them.

The index uses the unicode61 tokenizer and detail=column, which supports no phrase queries.
A quoted word that the tokenizer splits in two (`tool_run`, `my-notes`, `a·b`) is a phrase,
and the query fails. So each word is cut where the tokenizer cuts it, and which characters
belong to a token is asked of SQLite itself (its Unicode tables are not Python's).
"""

from __future__ import annotations

import functools
import sqlite3
import threading

from core.storage.connections import connect_scratch

MAX_TERMS = 8
MIN_PREFIX = 3  # shorter prefixes merge too many terms to answer quickly
MAX_TERM_CHARS = 256

_probe = connect_scratch()
_probe.execute(
    "CREATE VIRTUAL TABLE probe USING fts5(body, content='', detail=column,"
    " tokenize='unicode61 remove_diacritics 2')"
)
_probe_lock = threading.Lock()


@functools.lru_cache(maxsize=4096)
def is_token_char(char: str) -> bool:
    """Whether the index's tokenizer keeps `char` inside a word (ASCII: letters and digits)."""
    if char.isascii():
        return char.isalnum()
    if "\ud800" <= char <= "\udfff":  # a lone surrogate: UTF-8 cannot carry it to SQLite
        return False
    with _probe_lock:
        try:
            # Two tokens would make a phrase, which detail=column refuses: an error here
            # means the tokenizer cuts at `char`.
            _probe.execute("SELECT rowid FROM probe WHERE probe MATCH ?", (f'"a{char}b"',))
        except sqlite3.OperationalError:
            return False
    return True


def terms(text: str) -> list[tuple[str, bool]]:
    """The words of `text` as the tokenizer reads them, each with whether the owner ended it
    with `*` (a prefix search)."""
    found: list[tuple[str, bool]] = []
    word: list[str] = []
    for char in text:
        if is_token_char(char):
            word.append(char)
            continue
        if word:
            found.append(("".join(word)[:MAX_TERM_CHARS], char == "*"))
            word = []
        if len(found) >= MAX_TERMS:
            return found
    if word:
        found.append(("".join(word)[:MAX_TERM_CHARS], False))
    return found[:MAX_TERMS]


def fts_expression(text: str) -> str | None:
    """Free text as a safe FTS5 query: each word quoted and required. A word the owner ends
    with `*` matches as a prefix (from MIN_PREFIX characters; shorter ones match whole).

    Whole words stream from the index newest first; a prefix has its matches merged first,
    which is why it is asked for rather than implied."""
    parts = []
    for word, star in terms(text):
        prefix = star and len(word) >= MIN_PREFIX
        parts.append(f'"{word}"*' if prefix else f'"{word}"')
    return " AND ".join(parts) or None
