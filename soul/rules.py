"""What the soul's risk rules and denylist say about one action: pure functions, no policy state.

The governance engine decides what to do with the answer (refuse, ask, run); this module only
reads the soul, so the meaning of a rule lives next to the data that states it.
"""

from __future__ import annotations

import functools
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from soul.denylist import denied_by as denied_by
from soul.denylist import fits
from soul.readonly import command_reason
from soul.schema import RiskRule, RuleMatch, Soul, Tier, tier_rank
from soul.shell import Command, Statement, parse_command

SHELL = "shell.exec"


@dataclass(frozen=True)
class Action:
    """The facts governance knows about an action. None means "not known"."""

    capability: str
    command: str | None = None
    method: str | None = None
    in_workspace: bool | None = None
    overwrites: bool | None = None


@dataclass(frozen=True)
class Classification:
    """The tier of an action, the action kinds it counts as, and the rules that said so."""

    tier: Tier
    kinds: tuple[str, ...]
    rule_ids: tuple[str, ...]


def classify(soul: Soul, action: Action, *, default: Tier | None = None) -> Classification:
    """Tier and kinds of an action: every matching rule applies, the highest tier wins.

    A shell command line is classified command by command (``ls && rm x`` is T3); a command
    no rule matches, like an action no rule matches, gets `default` (the Soul's
    `risk_rules.default_tier` unless given: "T0" asks only what the rules say). A command
    word known only at run time (`$c`, `$(...)`) may be any command: every rule naming a
    command matches it, and it is never below the default tier. A command a T0 rule names
    but that is not provably read-only (`sort -o f`, `find -fprint f`, `PATH=. ls`) gets the
    default tier instead of T0, and so does a line that sets an environment-like variable
    (`PATH=.; ls`).
    """
    rules = [r for r in soul.risk_rules.rules if r.capability == action.capability]
    default = default or soul.risk_rules.default_tier
    if action.capability == SHELL and action.command is not None:
        statements = parse_command(action.command)
        commands = list(dict.fromkeys(c for s in statements for c in s.commands))  # once each
        groups = [[r for r in rules if _matches(r.match, action, c)] for c in commands]
        tiers = [_command_tier(g, c, default) for g, c in zip(groups, commands, strict=True)]
        if any(_sets_environment(s) for s in statements):
            tiers.append(default)  # `PATH=.; ls` may not run the ls the rules know
    else:
        groups = [[r for r in rules if _matches(r.match, action, None)]]
        tiers = [_highest(r.tier for r in group) if group else default for group in groups]
    matched = [r for group in groups for r in group]
    kinds = {action.capability} | {r.kind or r.capability for r in matched}
    ids = dict.fromkeys(r.id for r in matched)
    return Classification(_highest(tiers or [default]), tuple(sorted(kinds)), tuple(ids))


def stricter(first: Classification, second: Classification) -> Classification:
    """Both judgements of one action at once: the higher tier, and every kind and rule of
    either (a kind the Soul says must be asked stays asked, whichever side found it)."""
    return Classification(
        _highest([first.tier, second.tier]),
        tuple(sorted({*first.kinds, *second.kinds})),
        tuple(dict.fromkeys((*first.rule_ids, *second.rule_ids))),
    )


def needs_approval(soul: Soul, classification: Classification, *, autonomous: bool) -> bool:
    """Whether the owner must approve: a listed kind, T3, or (unprompted) a tier above the limit."""
    if set(classification.kinds) & set(soul.requires_approval) or classification.tier == "T3":
        return True
    limit = soul.scheduling_boundaries.max_tier_without_approval
    return autonomous and tier_rank(classification.tier) > tier_rank(limit)


def _highest(tiers: Iterable[Tier]) -> Tier:
    return max(tiers, key=tier_rank)


def _sets_environment(statement: Statement) -> bool:
    """A shell variable named like an environment variable (PATH, LD_PRELOAD) is set."""
    return any(any(c.isupper() for c in w.text.partition("=")[0]) for w in statement.assigned)


def _command_tier(group: list[RiskRule], command: Command, default: Tier) -> Tier:
    if not group:
        return default
    tier = _highest(r.tier for r in group)
    if command.dynamic:
        return _highest([tier, default])
    if tier == "T0" and command_reason(command) is not None:
        return default
    return tier


def _matches(match: RuleMatch | None, action: Action, command: Command | None) -> bool:
    if match is None:
        return True
    if (match.commands or match.args) and (command is None or not _command_matches(match, command)):
        return False
    method = action.method.upper() if action.method else None
    if match.methods and method is not None and method not in match.methods:
        return False
    scope = None
    if action.in_workspace is not None:
        scope = "workspace" if action.in_workspace else "outside_workspace"
    return not (_conflicts(match.scope, scope) or _conflicts(match.overwrites, action.overwrites))


def _conflicts(wanted: object, known: object) -> bool:
    """A condition fails only when it is set and the fact is known to differ."""
    return wanted is not None and known is not None and wanted != known


def _command_matches(match: RuleMatch, command: Command) -> bool:
    if match.commands and not any(_words_match(w, command) for w in match.commands):
        return False
    return not match.args or any(
        fits(arg, pattern) for arg in command.args for pattern in match.args
    )


@functools.lru_cache(maxsize=1024)
def _split_words(words: str) -> tuple[str, ...]:
    """A rule's command words, split once (rules are read for every command)."""
    return tuple(shlex.split(words)) or ("",)


def _words_match(words: str, command: Command) -> bool:
    head, *rest = _split_words(words)
    # A command word the shell picks at run time (`$c`, `r[m]`) may be any command.
    named = command.dynamic or fits(command.name, head)
    return named and _in_order(rest, command.args)


def _in_order(patterns: Sequence[str], tokens: Sequence[str]) -> bool:
    """Each pattern matches a later token than the one before it."""
    remaining = iter(tokens)
    return all(any(fits(token, p) for token in remaining) for p in patterns)
