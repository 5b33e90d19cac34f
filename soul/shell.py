"""Reads a shell command line the way the soul's rules see it: statements, command words, args.

This is a conservative reading, not a shell. Words are split as bash splits them
(soul/lexer.py); wrappers are looked through by their option grammar (soul/wrappers.py);
nested command lines (`sh -c`, `eval`, `$(...)`, backticks, `<(...)`, `find -exec`, git
aliases, here-documents fed to a shell) are read too. When unsure, more is read as a command,
never less, so a rule can only match more. The sandbox, not this module, is the last line of
defence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from soul.errors import BeyondReading, UnparseableCommand
from soul.lexer import lex
from soul.spelling import Context
from soul.words import ASSIGNMENT, Op, Token, Word
from soul.wrappers import GUESSED, SHELLS, basename, carried, shell_strings, unwrap

__all__ = ["Command", "Redirect", "Statement", "basename", "parse_command"]

BREAKS = frozenset({";", "&", "&&", "||", "\n", ";;", ";&", ";;&"})
PIPES = frozenset({"|", "|&", "(", ")", "()"})
KEYWORDS = frozenset(
    {"{", "}", "!", "if", "then", "else", "elif", "fi", "do", "done", "esac", "while", "until"}
)
_NOT_COMMANDS = frozenset({"for", "case", "select", "in"})
_DECLARERS = frozenset({"export", "declare", "typeset", "local", "readonly"})
# Lines of text fed to a shell read together before one that does not read is refused.
_MAX_PENDING_LINES = 64
_MAX_DEPTH = 4
_BROKEN = re.compile("[\ud800-\udfff]")  # a lone surrogate
_MAX_WRAPPERS = 16  # `nice nice ... rm`: refused as unreadable beyond this


@dataclass(frozen=True)
class Redirect:
    """`2> err.log`: the operator, its io number and its target (None when missing)."""

    op: str
    fd: str
    target: Word | None


@dataclass(frozen=True)
class Command:
    """One simple command: the basename of its command word and the tokens after it.

    `args` are token texts (redirections included, so `> f` is visible to rules); `operands`
    are the words after the command word. `wrappers` are the commands it runs under
    (`nice`, `xargs`, `find -exec`), outermost first; `guessed` means it was read from the
    arguments of a wrapper whose options are not modelled, so it may not be a command at all.
    """

    name: str
    args: tuple[str, ...]
    word: Word | None = None
    operands: tuple[Word, ...] = ()
    redirects: tuple[Redirect, ...] = ()
    assignments: tuple[Word, ...] = ()
    wrappers: tuple[str, ...] = ()
    guessed: bool = False

    @property
    def dynamic(self) -> bool:
        """The command word comes from an expansion, a substitution or a glob."""
        return self.word is not None and self.word.dynamic


@dataclass(frozen=True)
class Statement:
    """Tokens up to a `;`, `&&`, `||`, `&` or newline (pipes stay inside).

    `starts` index every command-position token (wrappers such as `sudo` or `xargs`
    included); `commands` are the commands that run, wrappers looked through. `spellings`
    give, per token, every way the shell may read it (see soul/spelling.py); `dynamic` are the
    starts whose command word is only known at run time.
    """

    tokens: tuple[str, ...]
    starts: tuple[int, ...]
    commands: tuple[Command, ...]
    spellings: tuple[tuple[str, ...], ...]
    dynamic: frozenset[int] = frozenset()
    assigned: tuple[Word, ...] = ()  # shell variables it sets: NAME=value alone, for NAME in
    keywords: frozenset[str] = frozenset()  # reserved words in command position (for, if, ...)


def parse_command(
    line: str, _depth: int = 0, _context: Context | None = None
) -> tuple[Statement, ...]:
    """Every statement in `line`, nested ones after the one that runs them; raises
    UnparseableCommand."""
    if _depth > _MAX_DEPTH:
        raise BeyondReading("commands are nested too deeply to read")
    if _depth == 0 and _BROKEN.search(line):  # JSON can carry one; no byte string can
        raise UnparseableCommand(
            "cannot read the command: it holds a broken character (a lone surrogate)"
        )
    context = _context if _context is not None else Context()
    statements: list[Statement] = []
    for tokens in split_statements(lex(line)):
        reader = _Reader(tokens, context)
        statements.append(reader.statement())
        for nested in reader.nested:
            statements.extend(parse_command(nested, _depth + 1, context))
        for guessed in reader.guessed:
            statements.extend(_read_guess(guessed, _depth + 1, context))
    return tuple(statements)


def _read_guess(line: str, depth: int, context: Context) -> tuple[Statement, ...]:
    """Text that may run as commands: read what reads, skip what is no command line, but
    refuse a line past the reading's limits (`echo '...' | sh` nested five deep runs).
    Text that does not read whole is read as a shell reads a script: line by line, each
    command run once it is complete, so `rm -rf /` still runs before a later line fails."""
    try:
        return parse_command(line, depth, context)
    except BeyondReading:
        raise
    except UnparseableCommand:
        pass
    statements: list[Statement] = []
    pending: list[str] = []
    for text in line.split("\n"):
        if len(pending) >= _MAX_PENDING_LINES:  # each try reads them all again
            raise BeyondReading(
                f"cannot read the command: {_MAX_PENDING_LINES} lines fed to a shell do not read"
            )
        pending.append(text)
        try:
            statements.extend(parse_command("\n".join(pending), depth, context))
        except BeyondReading:
            raise
        except UnparseableCommand:
            continue
        pending.clear()
    return tuple(statements)


def split_statements(tokens: list[Token]) -> list[list[Token]]:
    """Tokens grouped into statements at `;`, `&`, `&&`, `||` and newlines."""
    statements: list[list[Token]] = [[]]
    for token in tokens:
        if isinstance(token, Op) and token.text in BREAKS:
            statements.append([])
        else:
            statements[-1].append(token)
    return [s for s in statements if s]


@dataclass
class _Segment:
    """One simple command's words (with their token index) and redirections."""

    words: list[tuple[int, Word]] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)
    stop: int = 0  # token index just past the segment


class _Reader:
    def __init__(self, tokens: list[Token], context: Context) -> None:
        self.context = context
        self.texts: list[str] = []
        self.spellings: list[tuple[str, ...]] = []
        self.starts: list[int] = []
        self.commands: list[Command] = []
        self.nested: list[str] = []
        self.dynamic: set[int] = set()
        self.assigned: list[Word] = []
        self.keywords: set[str] = set()
        self.stdin_shells: set[int] = set()  # segments where a shell reads its stdin
        self.guessed: list[str] = []  # text that may be command lines (read tolerantly)
        self.segment = 0
        segments = self._segments(tokens)
        for self.segment, segment in enumerate(segments):
            self._segment(segment)
        self.guessed += _piped_text(segments[: min(self.stdin_shells, default=0)])

    def statement(self) -> Statement:
        return Statement(
            tuple(self.texts),
            tuple(self.starts),
            tuple(self.commands),
            tuple(self.spellings),
            frozenset(self.dynamic),
            tuple(self.assigned),
            frozenset(self.keywords),
        )

    def _emit(self, text: str, word: Word | None) -> int:
        self.texts.append(text)
        self.spellings.append(self.context.spell(word) if word is not None else (text,))
        return len(self.texts) - 1

    def _segments(self, tokens: list[Token]) -> list[_Segment]:
        segments = [_Segment()]
        pending: Op | None = None  # a redirect waiting for its target
        for token in tokens:
            current = segments[-1]
            if isinstance(token, Word):
                index = self._emit(token.text, token)
                self.nested.extend(token.nested)
                if pending is not None:
                    current.redirects.append(Redirect(pending.text, pending.fd, token))
                    pending = None
                else:
                    current.words.append((index, token))
                current.stop = index + 1
                continue
            if token.fd:
                self._emit(token.fd, None)
            index = self._emit(token.text, None)
            if pending is not None:
                current.redirects.append(Redirect(pending.text, pending.fd, None))
            pending = token if token.redirect else None
            if token.text in PIPES:
                segments.append(_Segment(stop=index + 1))
            else:
                current.stop = index + 1
        if pending is not None:
            segments[-1].redirects.append(Redirect(pending.text, pending.fd, None))
        return segments

    def _segment(self, segment: _Segment) -> None:
        words = segment.words
        p, assignments = 0, []
        while p < len(words):
            index, word = words[p]
            bare = not word.quoted
            if bare and word.text in _NOT_COMMANDS | KEYWORDS | {"function"}:
                self.keywords.add(word.text)
            if bare and word.text in _NOT_COMMANDS:
                if word.text in ("for", "select") and p + 1 < len(words):
                    variable = words[p + 1][1].text
                    self.assigned.append(Word(f"{variable}=", assignment=True))
                return
            if bare and word.text == "function":
                self.starts.append(index)  # deny patterns may name it (function f { f|f& })
                p += 2
            elif bare and word.text in KEYWORDS:
                p += 1
            elif word.assignment:
                assignments.append(word)
                p += 1
            else:
                break
        if p >= len(words):
            for assignment in assignments:
                self.context.assign(assignment)
            self.assigned.extend(assignments)
            return
        self._simple(segment, p, len(words), _Chain(tuple(assignments), (), False), set())

    def _simple(self, seg: _Segment, p: int, end: int, chain: _Chain, seen: set[int]) -> None:
        """Read the command at word `p` (words up to `end`), looking through wrappers."""
        if p in seen:
            return
        if len(chain.wrappers) > _MAX_WRAPPERS:
            raise BeyondReading("cannot read the command: too many wrappers")
        seen.add(p)
        index, word = seg.words[p]
        name = basename(word.text)
        self.starts.append(index)
        if word.dynamic:
            self.dynamic.add(index)
        texts = [w.text for _, w in seg.words[:end]]
        unwrapped = None if word.dynamic else unwrap(texts, p)
        if unwrapped is not None:
            self.nested.extend(unwrapped.lines)
            inner = chain.under(name)
            if unwrapped.command is not None:
                self._simple(seg, unwrapped.command, end, inner, seen)
            for guess in unwrapped.guesses:
                self._simple(seg, guess, end, inner.guessing(), seen)
            if unwrapped.command is not None and name not in GUESSED:
                return
            # Otherwise the wrapper is a command too: `sh -c '...'` runs a shell, and
            # `BASH_ENV=x` or `timeout 5` in front of it apply to that shell.
        stop = seg.words[end - 1][0] + 1 if end < len(seg.words) else seg.stop
        operands = tuple(w for _, w in seg.words[p + 1 : end])
        lines, bodies = carried(name, [w.text for w in operands])
        self.nested.extend(lines)
        self.guessed.extend(shell_strings(name, [w.text for w in operands]))
        for start, finish in bodies:
            body = _Chain((), (*chain.wrappers, name), chain.guessed)
            self._simple(seg, p + 1 + start, p + 1 + finish, body, seen)
        redirects = tuple(seg.redirects)
        if name in SHELLS:
            self.nested.extend(_fed_to_shell(redirects))
            if unwrapped is None or not unwrapped.lines:
                self.stdin_shells.add(self.segment)
        if not chain.wrappers and not chain.guessed:
            self._track(name, operands)
        command = Command(
            name,
            tuple(self.texts[index + 1 : stop]),
            word,
            operands,
            redirects,
            chain.assignments,
            chain.wrappers,
            chain.guessed,
        )
        self.commands.append(command)

    def _track(self, name: str, operands: tuple[Word, ...]) -> None:
        """`cd` and `export X=...` change how later statements read."""
        if name in ("cd", "pushd"):
            self.context.change_directory(operands)
        elif name in _DECLARERS:
            for word in operands:
                if ASSIGNMENT.match(word.text):  # `export "d=/"` sets d too
                    self.context.assign(word)


@dataclass(frozen=True)
class _Chain:
    """What a command runs under: prefix assignments, wrappers, and whether it is a guess."""

    assignments: tuple[Word, ...]
    wrappers: tuple[str, ...]
    guessed: bool

    def under(self, wrapper: str) -> _Chain:
        return _Chain(self.assignments, (*self.wrappers, wrapper), self.guessed)

    def guessing(self) -> _Chain:
        return _Chain(self.assignments, self.wrappers, True)


def _piped_text(segments: list[_Segment]) -> list[str]:
    """`echo 'rm x' | sh`, `cat <<EOF | bash`: the words after each command word before a
    shell that reads its input may be commands (a guess: what does not read is skipped)."""
    lines = [w.text for s in segments for _, w in s.words[1:]]  # `echo reboot | sh` too
    lines += [t.replace("\\n", "\n") for t in lines if "\\n" in t]  # as printf, echo -e write it
    for segment in segments:
        lines += _fed_to_shell(tuple(segment.redirects))
    return lines


def _fed_to_shell(redirects: tuple[Redirect, ...]) -> list[str]:
    """Command lines a shell reads from a here-document or here-string."""
    lines: list[str] = []
    for redirect in redirects:
        target = redirect.target
        if target is None:
            continue
        if redirect.op in ("<<", "<<-") and target.heredoc is not None:
            lines.append(target.heredoc)
        elif redirect.op == "<<<":
            lines.append(target.text)
    return lines
