"""The tokens of a shell line (words and operators) and how a word's characters become the
words the shell runs: split at an unquoted `$IFS`, brace-expanded, flagged for what expands
or globs."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import islice, pairwise

# How a character of a word was written: raw (unquoted), quoted (or escaped), part of an
# expansion, or an unquoted $IFS (which splits the word where it stands).
RAW, QUOTED, EXPANDED, SPLIT = "r", "q", "e", "s"
REDIRECTS = frozenset({"<", ">", ">>", ">|", "&>", "&>>", "<<", "<<-", "<<<", "<>", ">&", "<&"})
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")
MAX_WORDS = 256  # brace expansions beyond this are not spelled out (the word stays a glob)
MAX_BRACES = 32  # nor are words with more braces than this
# Unquoted glob characters, or braces the shell would expand ({a..z}, or too many to spell).
_GLOB = re.compile(r"[*?]|\[[^\0]*\]|\{[^\0]*(,|\.\.)[^\0]*\}")
_ANSI_C = re.compile(
    r"\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|c.|.)", re.S
)
_ESCAPES = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r"}
_ESCAPES |= {"t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}

Chars = list[tuple[str, str]]


@dataclass(frozen=True)
class Word:
    """One shell word after quote removal; expansions are kept as written (``$HOME``)."""

    text: str
    expands: bool = False  # a parameter, arithmetic or command expansion outside '...'
    globs: bool = False  # an unquoted * ? [..] or a brace expansion
    tilde: bool = False  # starts with an unquoted ~
    quoted: bool = False  # some part was quoted or escaped
    nested: tuple[str, ...] = ()  # command lines run inside: $(..), `..`, <(..), >(..)
    param: str | None = None  # NAME when the whole word is $NAME or ${NAME}
    assignment: bool = False  # NAME=value
    heredoc: str | None = None  # for a here-document's delimiter word: the document

    @property
    def dynamic(self) -> bool:
        """Its value is only known when the shell runs it."""
        return self.expands or self.globs or bool(self.nested)


@dataclass(frozen=True)
class Op:
    """An operator: ; & && || | |& ( ) () newline ;; or a redirect (with its io number)."""

    text: str
    fd: str = ""

    @property
    def redirect(self) -> bool:
        """`>`, `>>`, `<<` and the like."""
        return self.text in REDIRECTS


Token = Word | Op


@dataclass
class Pieces:
    """A word being read: its characters with how each was written, and what it runs."""

    chars: Chars = field(default_factory=list)
    nested: list[str] = field(default_factory=list)
    params: list[str] = field(default_factory=list)
    expansions: int = 0

    def add(self, text: str, kind: str) -> None:
        self.chars.extend((c, kind) for c in text)

    def words(self) -> list[Word]:
        """The words the shell makes of these characters."""
        split = any(k == SPLIT for _, k in self.chars)  # where $IFS stood: known at run time
        words: list[Word] = []
        for part in _split(self.chars):
            variants = list(islice(_braces(part), MAX_WORDS + 1))
            braced = len(variants) > 1
            words += [self._word(chars, split, braced) for chars in variants[:MAX_WORDS]]
        return words

    def _word(self, chars: Chars, split: bool, braced: bool) -> Word:
        raw = "".join(c if k == RAW else "\0" for c, k in chars)
        globs = bool(_GLOB.search(raw)) or braced
        only_param = len(self.params) == 1 and self.expansions == 1 and not split
        only_param = only_param and all(k == EXPANDED for c, k in chars if c)
        return Word(
            text="".join(c for c, _ in chars),
            expands=self.expansions > 0 or split,
            globs=globs,
            tilde=raw.startswith("~"),
            quoted=any(k == QUOTED for _, k in chars),
            nested=tuple(self.nested),
            param=self.params[0] if only_param else None,
            assignment=bool(ASSIGNMENT.match(raw)),
        )


def _split(chars: Chars) -> list[Chars]:
    """Split at unquoted $IFS; empty pieces vanish, as they do in the shell."""
    if not any(k == SPLIT for _, k in chars):
        return [chars]
    parts: list[Chars] = [[]]
    for c, k in chars:
        if k == SPLIT:
            parts.append([])
        else:
            parts[-1].append((c, k))
    return [p for p in parts if any(c for c, _ in p)]


def _braces(chars: Chars) -> Iterator[Chars]:
    """Brace expansion over unquoted braces, lazily: a{b,c}d -> abd acd."""
    opened = [i for i, (c, k) in enumerate(chars) if c == "{" and k == RAW]
    if len(opened) > MAX_BRACES:  # not spelled out: the word stays a glob (dynamic)
        yield chars
        return
    for start in opened:
        depth, commas = 0, []
        for j in range(start, len(chars)):
            c, k = chars[j]
            if k != RAW:
                continue
            depth += (c == "{") - (c == "}")
            if c == "," and depth == 1:
                commas.append(j)
            if depth == 0:
                break
        if depth != 0 or not commas:
            continue
        cuts = [start, *commas, j]
        head, tail = chars[:start], chars[j + 1 :]
        for a, b in pairwise(cuts):
            for middle in _braces(chars[a + 1 : b]):
                for rest in _braces(tail):
                    yield head + middle + rest
        return
    yield chars


def decode_ansi_c(body: str) -> str:
    """The value of the shell's $'...' quoting: `$'\\x72m'` is `rm`."""

    def one(match: re.Match[str]) -> str:
        escape = match.group(1)
        if escape[0] in "xuU":
            code = int(escape[1:], 16)
        elif escape[0] in "01234567":
            code = int(escape, 8)
        elif escape[0] == "c" and len(escape) == 2:
            code = ord(escape[1]) & 0x1F
        else:
            return _ESCAPES.get(escape, "\\" + escape)
        return chr(code) if code <= 0x10FFFF else "\\" + escape

    return _ANSI_C.sub(one, body)
