"""Reads the parts of a shell word that quoting and expansion shape, at a cursor: "...",
$'...', $"...", $NAME and ${...}, $(...), `...`, $((...)) and $[...], and keeps the command
lines nested in them.

The lexer (soul/lexer.py) is built on this reader; a here-document body is read here too.
Nesting is bounded (MAX_NESTING), and anything unreadable raises UnparseableCommand.
"""

from __future__ import annotations

import re

from soul.errors import BeyondReading, UnparseableCommand
from soul.words import EXPANDED, QUOTED, RAW, SPLIT, Pieces, decode_ansi_c

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SPECIAL_PARAMS = "@*#?-$!0123456789"
_ANSI_C_BODY = re.compile(r"((?:[^'\\]|\\.)*)'", re.S)

MAX_NESTING = 32  # substitutions inside substitutions


class ExpansionReader:
    """A cursor over a command line (`s`, at `i`) that reads its quoted and expanded parts,
    `nesting` substitutions deep."""

    def __init__(self, line: str, nesting: int) -> None:
        self.s = line
        self.i = 0
        self.nesting = nesting
        # Inside a part only stepped over (its text is read again once it is known), the
        # lines nested in ${...}, $((...)) and $[...] are not read: reading them at every
        # level of a nest too would take time exponential in its depth.
        self.skipping = 0

    def fail(self, why: str) -> UnparseableCommand:
        return UnparseableCommand(f"cannot read the command: {why}")

    def beyond(self, why: str) -> BeyondReading:
        """A limit of the reading reached: the line may still be one the shell runs."""
        return BeyondReading(f"cannot read the command: {why}")

    def substitutions(self) -> tuple[str, ...]:
        """The command lines nested in a here-document body (expanded like "...")."""
        building = Pieces()
        while self.i < len(self.s):
            if self.s[self.i] in "$`":
                self._dollar_or_backtick(building, quoted=True)
            else:
                self.i += 2 if self.s[self.i] == "\\" else 1
        return tuple(building.nested)

    def _double_quoted(self, b: Pieces) -> None:
        s = self.s
        self.i += 1
        b.chars.append(("", QUOTED))
        while True:
            if self.i >= len(s):
                raise self.fail('a " is not closed')
            c = s[self.i]
            if c == '"':
                self.i += 1
                return
            if c == "\\" and self.i + 1 < len(s) and s[self.i + 1] in '$`"\\\n':
                if s[self.i + 1] != "\n":
                    b.add(s[self.i + 1], QUOTED)
                self.i += 2
            elif c in "$`":
                self._dollar_or_backtick(b, quoted=True)
            else:
                b.add(c, QUOTED)
                self.i += 1

    def _dollar_or_backtick(self, b: Pieces, *, quoted: bool) -> None:
        """A `$`-form or a backtick at the cursor: quoting, a substitution or a parameter."""
        s, start = self.s, self.i
        if not quoted and s.startswith("$'", start):
            self.i += 2
            b.add(self._ansi_c(), QUOTED)
            b.chars.append(("", QUOTED))
            return
        if not quoted and s.startswith('$"', start):
            self.i += 1  # $"..." reads as "...": the quote is read next
            return
        if s[start] == "`" or s.startswith(("$(", "$["), start):
            b.nested.extend(self._substitution())
        else:
            name = self._parameter(b)
            if name is None:
                b.add("$", QUOTED if quoted else RAW)
                return
            if name == "IFS" and not quoted:
                b.add(" ", SPLIT)  # the shell splits the word here
                return
            if name:
                b.params.append(name)
        b.expansions += 1
        b.add(s[start : self.i], EXPANDED)

    def _substitution(self) -> list[str]:
        """The command lines inside `...`, $(...), $((...)) or $[...] at the cursor."""
        s = self.s
        if s[self.i] == "`":
            self.i += 1
            return [re.sub(r"\\([\\`$])", r"\1", self._until_backtick())]
        if s.startswith("$((", self.i):
            self.i += 3
            return self._nested_in(self._balanced("(", ")", depth=2)[:-1])
        if s.startswith("$[", self.i):
            self.i += 2
            return self._nested_in(self._balanced("[", "]"))
        self.i += 2
        return [self._balanced("(", ")")]

    def _parameter(self, b: Pieces) -> str | None:
        """Read $NAME, ${...} or a special parameter ($?, $1) at the cursor. Its name: "" for
        a special or complex one, "IFS" for ${IFS...}; None when the $ is just a character."""
        s = self.s
        if s.startswith("${", self.i):
            self.i += 2
            inner = self._balanced("{", "}")
            b.nested.extend(self._nested_in(inner))
            name = _NAME.match(inner)
            if name and name.group() in (inner, "IFS"):
                return name.group()
            return ""
        name = _NAME.match(s, self.i + 1)
        if name:
            self.i = name.end()
            return name.group()
        if self.i + 1 < len(s) and s[self.i + 1] in _SPECIAL_PARAMS:
            self.i += 2
            return ""
        self.i += 1
        return None

    def _nested_in(self, text: str) -> list[str]:
        """The command lines nested in `text` (expanded like "..."), unless skipping."""
        if self.skipping:
            return []
        return list(ExpansionReader(text, self.nesting + 1).substitutions())

    def _until_backtick(self) -> str:
        s, start = self.s, self.i
        while self.i < len(s):
            if s[self.i] == "\\":
                self.i += 2
            elif s[self.i] == "`":
                self.i += 1
                return s[start : self.i - 1]
            else:
                self.i += 1
        raise self.fail("a ` is not closed")

    def _balanced(self, opening: str, closing: str, depth: int = 1) -> str:
        """Text up to the matching `closing` (quotes and nested substitutions skipped)."""
        if self.nesting >= MAX_NESTING:
            raise self.beyond("substitutions are nested too deeply")
        self.nesting += 1
        try:
            return self._balanced_text(opening, closing, depth)
        finally:
            self.nesting -= 1

    def _balanced_text(self, opening: str, closing: str, depth: int) -> str:
        s, start = self.s, self.i
        while self.i < len(s):
            c = s[self.i]
            if c == "\\":
                self.i += 2
                continue
            if c == "'":
                end = s.find("'", self.i + 1)
                if end < 0:
                    raise self.fail("a ' is not closed")
                self.i = end + 1
                continue
            if c in '"`$':
                self._skip_quoted_part()
                continue
            if c == opening:
                depth += 1
            elif c == closing:
                depth -= 1
                if depth == 0:
                    self.i += 1
                    return s[start : self.i - 1]
            self.i += 1
        raise self.fail(f"a {opening} is not closed")

    def _skip_quoted_part(self) -> None:
        """Step over "...", `...` or a $-expansion inside a substitution being skipped."""
        c = self.s[self.i]
        self.skipping += 1
        try:
            if c == '"':
                self._double_quoted(Pieces())
            elif c == "`":
                self.i += 1
                self._until_backtick()
            elif self.s.startswith(("$(", "${", "$["), self.i):
                self._dollar_or_backtick(Pieces(), quoted=True)
            else:
                self.i += 1
        finally:
            self.skipping -= 1

    def _ansi_c(self) -> str:
        """The value of $'...' (the lexer stands after the opening quote)."""
        body = _ANSI_C_BODY.match(self.s, self.i)
        if body is None:
            raise self.fail("a $' is not closed")
        self.i = body.end()
        return decode_ansi_c(body.group(1))
