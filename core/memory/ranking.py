"""Full-text ranking at a bounded cost, however large memory grows.

SQLite's bm25() costs microseconds for every row that matches, and a request's commonest
words match a good part of 100,000 facts. So the ranking is done by this module's SQL, with
BM25's weight for a word (its idf: the rarer, the heavier) and a row scoring the weights of
the words it holds; short facts rarely repeat a word, so BM25's term-frequency and length
terms would change little. Each word's newest PER_WORD matches are read: all of a rare
word's ("atlas" finds the oldest fact that has it), the newest of a common one's, whose
frequency is told by how far back its PER_WORD-th match lies. Reading a row id costs far
less than ranking it: at most PER_WORD ids per word, whatever the size, in one statement
that also fetches the rows."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

PER_WORD = 64  # the most matches read for one word
IDF = "memory_idf"  # the SQL function the reading connection registers (idf below)


@dataclass(frozen=True, slots=True)
class Index:
    """An FTS5 table and the query of the highest rowid of its content."""

    fts: str
    newest: str


ITEMS = Index("memory_items_fts", "SELECT max(n) FROM memory_items")
EXPERIENCES = Index("memory_experiences_fts", "SELECT max(n) FROM memory_experiences")


def ranked(index: Index, terms: Sequence[str], limit: int) -> tuple[str, list[object]]:
    """A WITH clause ending in `ranked(id, relevance)`: the best `limit` rowids holding any
    of `terms`, relevance negative like bm25's (lower is better; the newer row on a tie), and
    its parameters."""
    hits = " UNION ALL ".join(
        f"SELECT {i}, rowid FROM (SELECT rowid FROM {index.fts} WHERE {index.fts} MATCH ?"
        f" ORDER BY rowid DESC LIMIT {PER_WORD})"
        for i in range(len(terms))
    )
    sql = (
        f"WITH hits(term, id) AS MATERIALIZED ({hits}),"
        f" weights(term, weight) AS (SELECT term, {IDF}(count(*), min(id), ({index.newest}))"
        " FROM hits GROUP BY term),"
        " ranked(id, relevance) AS (SELECT hits.id, -sum(weights.weight) - hits.id * 1e-12"
        " FROM hits JOIN weights USING (term) GROUP BY hits.id ORDER BY 2 LIMIT ?) "
    )
    return sql, [*(f'"{t}"' for t in terms), max(0, limit)]


def idf(count: int, oldest: int, newest: int | None) -> float:
    """BM25's weight of a word seen in `count` rows (its newest PER_WORD, down to rowid
    `oldest`), among about `newest` rows."""
    total = max(newest or 0, count)
    frequency = count if count < PER_WORD else count * total / max(1, total - oldest + 1)
    return math.log(1 + (total - frequency + 0.5) / (frequency + 0.5))
