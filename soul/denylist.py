"""The denylist: command lines the Soul refuses outright, whatever the tier or approval.

A deny pattern is a list of fnmatch patterns: the first names a command word, the rest must
match later tokens of the same statement, in order. Tokens match in any of their spellings
(`//`, `/.` and `.` after `cd /` all match `/`; see soul/spelling.py), and a command word the
shell only learns at run time (`$c`, `$(echo rm)`, `r[m]`) matches every pattern whose
arguments match.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase

from soul.schema import DenyRule, Soul
from soul.shell import Statement, basename, parse_command

_GLOB_CHARS = frozenset("*?[")


@functools.lru_cache(maxsize=16384)
def fits(text: str, pattern: str) -> bool:
    """fnmatchcase, remembered: the same few patterns meet the same few words all day."""
    return fnmatchcase(text, pattern)


def denied_by(soul: Soul, command: str) -> DenyRule | None:
    """The first deny rule matching a shell command line; raises UnparseableCommand."""
    heads = [_Heads.of(statement) for statement in parse_command(command)]
    named = {name for statement in heads for name in statement.first}
    dynamic = any(statement.dynamic for statement in heads)
    for rule in soul.risk_rules.denylist:
        for pattern in rule.commands:
            literal = _GLOB_CHARS.isdisjoint(pattern[0])
            if literal and not dynamic and pattern[0] not in named:
                continue  # no command on the line goes by that name
            if any(_pattern_in(pattern, statement) for statement in heads):
                return rule
    return None


@dataclass(frozen=True)
class _Heads:
    """A statement's command positions indexed by every name they go by."""

    statement: Statement
    names: tuple[tuple[int, frozenset[str]], ...]  # (start, names), earliest first
    first: dict[str, int]  # name -> the earliest start going by it
    dynamic: tuple[int, ...]  # starts whose command is only known at run time

    @classmethod
    def of(cls, statement: Statement) -> _Heads:
        names: list[tuple[int, frozenset[str]]] = []
        first: dict[str, int] = {}
        for start in sorted(set(statement.starts)):
            spelled = statement.spellings[start]
            known = frozenset(n for s in spelled for n in (s, basename(s)))
            names.append((start, known))
            for name in known:
                first.setdefault(name, start)
        return cls(statement, tuple(names), first, tuple(sorted(statement.dynamic)))

    def earliest(self, head: str, has_rest: bool) -> int | None:
        """The first command position `head` names. An expansion may be any command (when
        the pattern has arguments to match); a glob names the commands it matches."""
        if _GLOB_CHARS.isdisjoint(head):
            found = self.first.get(head)
        else:
            found = next((s for s, known in self.names if any(fits(n, head) for n in known)), None)
        for start in self.dynamic:
            if found is not None and start >= found:
                break
            if has_rest or fits(head, basename(self.statement.tokens[start])):
                return start
        return found


def _pattern_in(pattern: Sequence[str], heads: _Heads) -> bool:
    head, rest = pattern[0], pattern[1:]
    start = heads.earliest(head, bool(rest))
    # The earliest start sees every token a later one does: one scan is enough.
    return start is not None and _in_order(rest, heads.statement.spellings[start + 1 :])


def _in_order(patterns: Sequence[str], spellings: Sequence[tuple[str, ...]]) -> bool:
    """Each pattern matches a later token than the one before (in any of its spellings)."""
    remaining = iter(spellings)
    return all(any(any(fits(s, p) for s in forms) for forms in remaining) for p in patterns)
