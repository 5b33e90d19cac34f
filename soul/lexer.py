"""Splits a shell command line into words and operators the way bash reads it, and keeps what
quoting hides: which characters were quoted, what expands, what globs and what runs nested.

Brace expansion (``{rm,-rf,x}``) and splitting on ``$IFS`` (``rm${IFS}-rf``) are applied here,
so the words a rule sees are the words the shell would run. The quoted and expanded parts of a
word are read by soul/expansions.py. Anything this lexer cannot read raises UnparseableCommand:
an unreadable line is never taken as harmless.
"""

from __future__ import annotations

from soul.errors import UnparseableCommand
from soul.expansions import ExpansionReader
from soul.words import ASSIGNMENT, EXPANDED, QUOTED, RAW, Op, Pieces, Token, Word


def _names(text: str) -> tuple[str, ...]:
    return tuple(text.split())


_BLANKS = " \t"  # bash splits on these (and newline); \r is part of a word
_OPERATOR_CHARS = ";&|()<>"
# Longest first: the lexer takes the longest operator that matches.
_OPERATORS = _names(";;& &>> <<< <<- ;; ;& && || |& &> >> >| >& << <> <& ; & | ( ) < >")


MAX_TOKENS = 4096  # a longer line is refused as unreadable rather than read slowly


def lex(line: str) -> list[Token]:
    """The words and operators of `line`; raises UnparseableCommand."""
    try:
        return _Lexer(line).run()
    except RecursionError:  # a backstop: the nesting limit should come first
        raise UnparseableCommand("cannot read the command: it is nested too deeply") from None


class _Lexer(ExpansionReader):
    def __init__(self, line: str, nesting: int = 0) -> None:
        super().__init__(line, nesting)
        self.out: list[Token] = []
        self.heredocs: list[tuple[int, str, bool, bool]] = []  # (index, delimiter, quoted, -)

    def run(self) -> list[Token]:
        s = self.s
        while self.i < len(s):
            c = s[self.i]
            if c in _BLANKS or s.startswith("\\\n", self.i):
                self.i += 1 if c in _BLANKS else 2
            elif c == "#":
                end = s.find("\n", self.i)
                self.i = len(s) if end < 0 else end
            elif c == "\n":
                self.i += 1
                self.out.append(Op("\n"))
                self._read_heredocs()
            elif s.startswith(("<(", ">("), self.i):
                self._word()
            elif c in _OPERATOR_CHARS:
                self._operator("")
            else:
                self._word()
        if self.heredocs:
            raise self.fail("a here-document is not closed")
        return self.out

    def _operator(self, fd: str) -> None:
        s = self.s
        if s[self.i] == "(":
            j = self.i + 1
            while j < len(s) and s[j] in _BLANKS:
                j += 1
            if j < len(s) and s[j] == ")":
                self.i = j + 1
                self.out.append(Op("()"))
                return
        text = next(op for op in _OPERATORS if s.startswith(op, self.i))
        self.i += len(text)
        self.out.append(Op(text, fd))
        if text in ("<<", "<<-"):
            while self.i < len(s) and s[self.i] in _BLANKS:
                self.i += 1
            if self.i >= len(s) or s[self.i] in _OPERATOR_CHARS + "\n":
                raise self.fail("a here-document needs a delimiter")
            raw_start = self.i
            self._pieces()  # past the word; bash neither splits nor expands it
            raw = self.s[raw_start : self.i]
            delimiter, quoted = _unquoted(raw), any(q in raw for q in "'\"\\")
            self.out.append(Word(delimiter, quoted=quoted))
            self.heredocs.append((len(self.out) - 1, delimiter, quoted, text == "<<-"))

    def _read_heredocs(self) -> None:
        """The bodies of the here-documents opened on the line just ended."""
        for index, delimiter, quoted, strip in self.heredocs:
            lines: list[str] = []
            while True:
                if self.i >= len(self.s):
                    raise self.fail(f"here-document {delimiter!r} is not closed")
                end = self.s.find("\n", self.i)
                end = len(self.s) if end < 0 else end
                text = self.s[self.i : end]
                self.i = min(end + 1, len(self.s))
                if (text.lstrip("\t") if strip else text) == delimiter:
                    break
                lines.append(text)
            body = "\n".join(lines)
            word = self.out[index]
            assert isinstance(word, Word)
            nested = () if quoted else ExpansionReader(body, self.nesting).substitutions()
            expands = not quoted and ("$" in body or "`" in body)
            self.out[index] = Word(word.text, expands, quoted=True, nested=nested, heredoc=body)
        self.heredocs = []

    def _word(self) -> None:
        self._finish(self._pieces())

    def _pieces(self) -> Pieces:
        """The characters of the word at the cursor, with how each was written."""
        b = Pieces()
        s = self.s
        if s.startswith(("<(", ">("), self.i):
            direction = s[self.i]
            self.i += 2
            b.nested.append(self._balanced("(", ")"))
            b.add(f"{direction}(...)", EXPANDED)
            b.expansions += 1
        while self.i < len(s):
            c = s[self.i]
            if c in _BLANKS or c == "\n" or c in _OPERATOR_CHARS:
                if c == "(" and _is_array_assignment(b):
                    self.i += 1
                    inner = self._balanced("(", ")")
                    tokens = _Lexer(inner, self.nesting + 1).run()
                    b.nested.extend(n for t in tokens if isinstance(t, Word) for n in t.nested)
                    b.add(f"({inner})", QUOTED)
                    continue
                break
            if c == "\\":
                if s.startswith("\\\n", self.i):
                    self.i += 2
                    continue
                if self.i + 1 >= len(s):
                    raise self.fail("a backslash ends the line")
                b.add(s[self.i + 1], QUOTED)
                self.i += 2
            elif c == "'":
                end = s.find("'", self.i + 1)
                if end < 0:
                    raise self.fail("a ' is not closed")
                b.add(s[self.i + 1 : end], QUOTED)
                b.chars.append(("", QUOTED))  # '' is still a word
                self.i = end + 1
            elif c == '"':
                self._double_quoted(b)
            elif c in "$`":
                self._dollar_or_backtick(b, quoted=False)
            else:
                b.add(c, RAW)
                self.i += 1
        return b

    def _finish(self, b: Pieces) -> None:
        """Turn the characters into Words (split at $IFS, braces expanded)."""
        s = self.s
        io_number = (
            b.chars
            and all(k == RAW and c.isdigit() for c, k in b.chars)
            and self.i < len(s)
            and s[self.i] in "<>"
        )
        if io_number:
            self._operator("".join(c for c, _ in b.chars))
            return
        self.out.extend(b.words())
        if len(self.out) > MAX_TOKENS:
            raise self.beyond(f"it has more than {MAX_TOKENS} words")


def _is_array_assignment(b: Pieces) -> bool:
    text = "".join(c for c, _ in b.chars)
    return text.endswith("=") and bool(ASSIGNMENT.match(text)) and all(k == RAW for _, k in b.chars)


def _unquoted(raw: str) -> str:
    """A here-document's delimiter as bash compares it: quotes removed, nothing expanded
    (`<<{a,b}` ends at a line `{a,b}`, `<<a${IFS}b` at a line `a${IFS}b`)."""
    out: list[str] = []
    i, quote = 0, ""
    while i < len(raw):
        c = raw[i]
        if (
            c == "\\"
            and i + 1 < len(raw)
            and (quote == "" or (quote == '"' and raw[i + 1] in '$`"\\'))
        ):
            out.append(raw[i + 1])
            i += 2
            continue
        if c in "'\"" and quote in ("", c):
            quote = "" if quote else c
        else:
            out.append(c)
        i += 1
    return "".join(out)
