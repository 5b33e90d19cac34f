"""Which command lines are provably read-only: a closed list of commands, checked option by
option, with nothing the shell decides only at run time.

A line is proven read-only when every command in it is on the list below with no writing
option (`find -delete`, `sort -o`, `git branch NAME`...), its only output redirections go to
/dev/null, and it holds no substitution, no variable expansion, no assignment, no function,
loop or background job, and no wrapper other than the harmless ones (`timeout`, `nice`,
`stdbuf`, `command`). Anything else is "not proven", which is not the same as "writes": it
only means the line must be judged by what it does (a dry run) or by the owner.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Sequence

from soul.errors import UnparseableCommand
from soul.git_reads import git_reason
from soul.lexer import lex
from soul.shell import Command, Redirect, parse_command
from soul.words import Op, Word
from soul.wrappers import GRAMMARS, names

Check = Callable[[Sequence[str]], str | None]

SINKS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
_INPUTS = frozenset({"<", "<<", "<<-", "<<<", "<&"})
_ALLOWED_OPS = frozenset({";", "&&", "||", "\n", "|", "|&"})
_COMPOUND = frozenset({"for", "case", "select", "function", "in"})
_SYSTEM_DIRS = frozenset({"/bin", "/usr/bin"})


def _plain(args: Sequence[str]) -> str | None:
    """No option of this command writes, runs a program or sets a variable."""
    return None


def _forbids(longs: str = "", letters: str = "") -> Check:
    """Refuses long options (and their GNU abbreviations) and short option letters (alone or
    in a cluster)."""
    long_options = tuple(longs.split())

    def check(args: Sequence[str]) -> str | None:
        for arg in args:
            if arg.startswith("--"):
                key = arg.partition("=")[0]
                if len(key) > 2 and any(option.startswith(key) for option in long_options):
                    return f"{arg} writes or runs a program"
            elif arg.startswith("-") and any(c in letters for c in arg[1:]):
                return f"{arg} writes, runs a program or sets a variable"
        return None

    return check


def _find(args: Sequence[str]) -> str | None:
    for arg in args:
        if arg in ("-delete", "-exec", "-execdir", "-ok", "-okdir", "-fls") or arg.startswith(
            "-fprint"
        ):
            return f"find {arg} writes or runs a program"
    return None


def _operands(args: Sequence[str], valued: frozenset[str] = frozenset()) -> list[str]:
    """The operands among `args` (after `--` everything is one); `valued` take the next word."""
    found: list[str] = []
    skip, ended = False, False
    for arg in args:
        if skip:
            skip = False
        elif ended or arg == "-" or not arg.startswith("-"):
            found.append(arg)
        elif arg == "--":
            ended = True
        else:
            skip = arg in valued
    return found


def _uniq(args: Sequence[str]) -> str | None:
    """`uniq IN OUT` writes OUT."""
    if len(_operands(args, frozenset({"-f", "-s", "-w"}))) > 1:
        return "uniq with two files writes the second"
    return None


def _date(args: Sequence[str]) -> str | None:
    """`date -s` and `date MMDDhhmm` set the clock."""
    reason = _forbids("--set", "s")(args)
    valued = frozenset({"-d", "-f", "-r", "--date", "--file", "--reference"})
    if reason is None and any(not a.startswith("+") for a in _operands(args, valued)):
        reason = "date with an operand sets the clock"
    return reason


READ_ONLY: dict[str, Check] = {
    name: _plain
    for name in names(
        "ls cat head tail wc grep egrep fgrep du df stat pwd echo true false : test [ cd "
        "basename dirname realpath readlink which type whoami id uname nproc arch sleep seq "
        "cut tr nl tac rev paste join comm fold fmt expand unexpand column md5sum sha1sum "
        "sha224sum sha256sum sha384sum sha512sum b2sum cksum sum base64 base32 od hexdump "
        "strings diff cmp printenv jq"
    )
}
READ_ONLY |= {
    "find": _find,
    "sort": _forbids("--output --compress-program --temporary-directory", "oT"),
    "tree": _forbids("--output", "oR"),
    "file": _forbids("--compile", "C"),
    "rg": _forbids("--pre --hostname-bin"),
    "fd": _forbids("--exec --exec-batch", "xX"),
    "fdfind": _forbids("--exec --exec-batch", "xX"),
    "printf": _forbids(letters="v"),  # printf -v PATH . would change what later words run
    "uniq": _uniq,
    "date": _date,
    "git": git_reason,
}


def read_only_reason(line: str) -> str | None:
    """Why `line` is not provably read-only; None when it is."""
    try:
        tokens = lex(line)
        statements = parse_command(line)
    except UnparseableCommand as exc:
        return str(exc)
    if not any(isinstance(t, Word) for t in tokens):
        return "there is no command"
    reason = _token_reason(tokens)
    if reason is not None:
        return reason
    for statement in statements:
        if statement.assigned:
            return "it sets shell variables"
        compound = statement.keywords & _COMPOUND
        if compound:
            return f"{sorted(compound)[0]} is not proven read-only"
        for command in statement.commands:
            reason = command_reason(command, strict=True)
            if reason is not None:
                return reason
    return None


def provably_read_only(line: str) -> bool:
    """Whether `line` can only read: it may run at once, outside any dry run."""
    return read_only_reason(line) is None


def _token_reason(tokens: list[Word | Op]) -> str | None:
    for i, token in enumerate(tokens):
        if isinstance(token, Word):
            if token.nested:
                return "it runs a substitution"
            if token.expands:
                return f"{token.text} is only known at run time"
            continue
        if token.redirect:
            following = tokens[i + 1] if i + 1 < len(tokens) else None
            target = following if isinstance(following, Word) else None
            reason = redirect_reason(Redirect(token.text, token.fd, target))
            if reason is not None:
                return reason
        elif token.text not in _ALLOWED_OPS:
            return f"{token.text!r} (a background job, subshell or function) is not proven"
    return None


def redirect_reason(redirect: Redirect) -> str | None:
    """Why a redirection may write; None when it only reads or goes to /dev/null."""
    target = redirect.target
    if target is None:
        return "a redirection has no target"
    if target.nested:
        return "a redirection runs a substitution"
    if redirect.op in _INPUTS:
        return None
    if redirect.op == "<>":
        return f"<> {target.text} opens it for writing"
    if redirect.op == ">&" and (target.text.isdigit() or target.text == "-"):
        return None
    if target.dynamic or target.tilde or target.text not in SINKS:
        return f"it writes to {target.text}"
    return None


def command_reason(command: Command, *, strict: bool = False) -> str | None:
    """Why one command is not provably read-only; None when it is.

    `strict` also refuses variable expansions in the arguments of commands whose options
    cannot write (`cat $f`); without it only commands with writing options refuse them.
    """
    name = command.name
    if command.guessed:
        return f"{name} may be run by a wrapper this reading does not know"
    if command.assignments:
        return f"{name} runs with changed environment variables"
    for wrapper in command.wrappers:
        grammar = GRAMMARS.get(wrapper)
        if grammar is None or not grammar.harmless:
            return f"{name} runs under {wrapper}"
    word = command.word
    if word is None or word.dynamic or word.tilde:
        return "the command is only known at run time"
    if "/" in word.text and posixpath.dirname(word.text) not in _SYSTEM_DIRS:
        return f"{word.text} is not a system command"
    check = READ_ONLY.get(name)
    if check is None:
        return f"{name} is not a known read-only command"
    for redirect in command.redirects:
        reason = redirect_reason(redirect)
        if reason is not None:
            return reason
    for operand in command.operands:
        if operand.nested:
            return f"{name} runs a substitution"
        sensitive = check is not _plain
        if operand.expands and (strict or sensitive):
            return f"{operand.text} is only known at run time"
        if operand.globs and sensitive:
            return f"a glob may give {name} a writing option"
    return check([w.text for w in command.operands])
