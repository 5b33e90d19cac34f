"""Reads a shell command line the way the soul's rules see it: statements, command words, args.

This is a conservative reading, not a shell: when unsure it treats a token as a command word,
so a rule can only match more, never less. Nested commands (``sh -c``, ``eval``, ``$(...)``,
backticks, ``<(...)``) are read too. The sandbox, not this module, is the last line of defence.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from soul.errors import UnparseableCommand

_PUNCTUATION = "();<>|&\n`"
_REDIRECTS = frozenset({"<", ">", ">>", "<<", "<<<", ">&", "<&", "&>", "&>>", ">|", "<>"})
_PIPES = frozenset({"|", "|&", "(", ")", "()", "`", "<(", ">("})
_KEYWORDS = frozenset({"{", "}", "!", "if", "then", "else", "elif", "fi", "do", "done", "esac"})
_NOT_COMMANDS = frozenset({"for", "case", "select", "function", "in"})
_WRAPPERS = frozenset(
    {"env", "nice", "nohup", "time", "command", "builtin", "exec", "xargs", "timeout", "stdbuf"}
    | {"ionice", "setsid", "watch", "sudo", "doas", "chronic", "unbuffer", "busybox"}
)
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "fish", "su"})
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_NUMBER = re.compile(r"^\d+(\.\d+)?[smhd]?$")
_MAX_DEPTH = 4


@dataclass(frozen=True)
class Command:
    """One simple command: the basename of its command word and what follows it."""

    name: str
    args: tuple[str, ...]


@dataclass(frozen=True)
class Statement:
    """Tokens up to a `;`, `&&`, `||`, `&` or newline (pipes stay inside).

    `starts` are the indices of every command-position token (wrappers such as `sudo` or
    `xargs` included); `commands` are the commands that actually run, wrappers looked through.
    """

    tokens: tuple[str, ...]
    starts: tuple[int, ...]
    commands: tuple[Command, ...]


def basename(word: str) -> str:
    """`/usr/bin/rm` -> `rm`."""
    return word.rstrip("/").rsplit("/", 1)[-1] or word


def parse_command(line: str, _depth: int = 0) -> tuple[Statement, ...]:
    """Every statement in `line`, nested ones appended; raises UnparseableCommand."""
    if _depth > _MAX_DEPTH:
        raise UnparseableCommand("commands are nested too deeply to read")
    statements: list[Statement] = []
    for tokens in _split_statements(_tokenize(line)):
        statement = _read_statement(tokens)
        statements.append(statement)
        for nested in _nested_lines(statement):
            statements.extend(parse_command(nested, _depth + 1))
    return tuple(statements)


def _tokenize(line: str) -> list[str]:
    lexer = shlex.shlex(line, posix=True, punctuation_chars=_PUNCTUATION)
    lexer.whitespace_split = True
    lexer.whitespace = " \t\r"
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError as exc:
        raise UnparseableCommand(f"cannot read the command: {exc}") from None


def _kind(token: str) -> str:
    """word, redirect, pipe (new command, same statement) or break (new statement)."""
    if not token or any(c not in _PUNCTUATION for c in token):
        return "word"
    if token in _REDIRECTS:
        return "redirect"
    return "pipe" if token in _PIPES else "break"


def _split_statements(tokens: list[str]) -> list[tuple[str, ...]]:
    statements: list[tuple[str, ...]] = []
    current: list[str] = []
    for token in [*tokens, ";"]:
        if _kind(token) == "break":
            if current:
                statements.append(tuple(current))
            current = []
        else:
            current.append(token)
    return statements


def _read_statement(tokens: tuple[str, ...]) -> Statement:
    starts: list[int] = []
    commands: list[Command] = []
    segment: list[int] = []
    for index in [*range(len(tokens)), len(tokens)]:
        if index < len(tokens) and _kind(tokens[index]) != "pipe":
            segment.append(index)
            continue
        positions = _command_positions(tokens, segment)
        starts.extend(positions)
        if positions:
            first, end = positions[-1], segment[-1] + 1
            commands.append(Command(basename(tokens[first]), tokens[first + 1 : end]))
        segment = []
    return Statement(tokens, tuple(starts), tuple(commands))


def _command_positions(tokens: tuple[str, ...], segment: list[int]) -> list[int]:
    """Indices of the wrappers and, last, the command word of one simple command."""
    positions: list[int] = []
    after_wrapper = False
    k = 0
    while k < len(segment):
        token = tokens[segment[k]]
        if _kind(token) == "redirect":
            k += 2
            continue
        if token in _NOT_COMMANDS and not positions:
            return []
        skippable = token in _KEYWORDS or _ASSIGNMENT.match(token)
        if skippable or (after_wrapper and (token.startswith("-") or _NUMBER.match(token))):
            k += 1
            continue
        positions.append(segment[k])
        if basename(token) not in _WRAPPERS:
            return positions
        after_wrapper = True
        k += 1
    return positions


def _nested_lines(statement: Statement) -> list[str]:
    """Command text that runs inside this statement: sh -c, eval, $(...) and backticks."""
    lines = [t for t in statement.tokens if _kind(t) == "word" and ("$(" in t or "`" in t)]
    for command in statement.commands:
        if command.name == "eval":
            lines.append(" ".join(command.args))
        elif command.name in _SHELLS:
            lines.extend(_shell_c_argument(command.args))
    return lines


def _shell_c_argument(args: tuple[str, ...]) -> list[str]:
    for i, arg in enumerate(args[:-1]):
        if arg.startswith("-") and not arg.startswith("--") and "c" in arg:
            return [args[i + 1]]
    return []
