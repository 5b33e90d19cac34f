"""Free text as an FTS5 query, and how relevance and recency combine into one score."""

from __future__ import annotations

import math
import re

_WORD = re.compile(r"\w+", re.UNICODE)
MAX_TERMS = 8
# Words that would match most of memory and say nothing about what is asked.
_STOPWORDS_TEXT = """
    a about after all also an and any are as at be been but by can could did do does done
    for from get got had has have he her him his how i if in into is it its just let me my no
    not now of on or our out please she so some than that the their them then there these
    they this those to too up us was we were what when where which who why will with would
    you your yes ok okay"""
_STOPWORDS = frozenset(_STOPWORDS_TEXT.split())
RECENCY_HALF_LIFE = 30 * 86400.0  # a fact used a month ago weighs three quarters as much


def words(text: str) -> list[str]:
    """The text's meaningful words, lower case, each once: no stopwords, no single letters;
    the longest MAX_TERMS when there are more."""
    found: list[str] = []
    for word in _WORD.findall(text.lower()):
        if len(word) > 1 and word not in _STOPWORDS and word not in found:
            found.append(word)
    if len(found) > MAX_TERMS:
        found = sorted(found, key=len, reverse=True)[:MAX_TERMS]
    return found


def match_expression(text: str) -> str | None:
    """Any of the text's meaningful words, each quoted (so no word is read as FTS5 syntax);
    None when no word is left."""
    return " OR ".join(f'"{w}"' for w in words(text)) or None


def all_words(text: str) -> str | None:
    """Every meaningful word required (for an explicit search): "server atlas" finds items
    holding both."""
    expression = match_expression(text)
    return expression.replace(" OR ", " AND ") if expression else None


def score(bm25: float, last_used: float, now: float) -> float:
    """Higher is better: relevance (SQLite's bm25 is negative, more negative is better) times
    a recency weight between 1/2 (long unused) and 1 (used just now)."""
    age = max(0.0, now - last_used)
    return -bm25 * (0.5 + 0.5 * math.exp(-age * math.log(2) / RECENCY_HALF_LIFE))
