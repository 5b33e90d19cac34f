"""Commands that run other commands: where in their arguments the real command is.

`timeout -s KILL 5 rm x` runs `rm` (the option's value `KILL` and the duration `5` are not
commands); `flock /tmp/lk rm x` runs `rm`; `sh -c -- 'rm x'`, `flock lk -c 'rm x'` and
`watch rm x` run a command line; `find . -exec rm {} +` and `git -c alias.x='!rm x' x` carry
one. A wrapper whose options this module does not model is read the careful way: every word
after it that is not an option may be the command.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass


def names(text: str) -> frozenset[str]:
    """The space-separated words of `text` (keeps long word lists short to read)."""
    return frozenset(text.split())


def basename(word: str) -> str:
    """`/usr/bin/rm` -> `rm`."""
    return word.rstrip("/").rsplit("/", 1)[-1] or word


@dataclass(frozen=True)
class Grammar:
    """How a wrapper's arguments read (getopt style, options first)."""

    valued: frozenset[str]  # options whose value is the next word
    operands: int  # words between the options and the command (timeout's duration)
    runs: frozenset[str]  # options whose value is a command line (flock -c)
    follows: bool  # a command follows the options (False: only `runs` runs one)
    joins: bool  # the words that follow are one command line (watch)
    harmless: bool  # adds no effect of its own: a read-only command stays read-only
    assigns: bool  # NAME=VALUE words may stand before the command (env, sudo, bash's time)


def _g(
    valued: str = "",
    operands: int = 0,
    runs: str = "",
    *,
    follows: bool = True,
    joins: bool = False,
    harmless: bool = False,
    assigns: bool = False,
) -> Grammar:
    return Grammar(
        frozenset(valued.split()),
        operands,
        frozenset(runs.split()),
        follows,
        joins,
        harmless,
        assigns,
    )


_SUDO = "-u -g -C -D -h -p -r -t -U -T -R --user --group --close-from --chdir --host --prompt"
_XARGS = "-a -E -I -L -n -P -s -d --arg-file --max-lines --max-args --max-procs --max-chars"
_SCRIPT = "-O -I -B -T -E -o -m --log-out --log-in --log-io --log-timing --echo --output-limit"
_RUNUSER = "-u -g -G -s -w --user --group --supp-group --shell --whitelist-environment"

GRAMMARS: dict[str, Grammar] = {
    "timeout": _g("-s -k --signal --kill-after", 1, harmless=True),
    "nice": _g("-n --adjustment", harmless=True),
    "stdbuf": _g("-i -o -e --input --output --error", harmless=True),
    "command": _g(harmless=True),
    "ionice": _g("-c -n -p -P -u --class --classdata --pid --pgid --uid"),
    "exec": _g("-a"),
    "time": _g("-f -o --format --output", assigns=True),
    "env": _g("-u -C --unset --chdir", runs="-S --split-string", assigns=True),
    "xargs": _g(f"{_XARGS} --delimiter --process-slot-var"),
    "sudo": _g(f"{_SUDO} --role --type --other-user --command-timeout --chroot", assigns=True),
    "doas": _g("-u -C"),
    "chrt": _g("-T -P -D --sched-runtime --sched-period --sched-deadline", 1),
    "taskset": _g(operands=1),
    "flock": _g("-w -E --timeout --wait --conflict-exit-code", 1, "-c --command"),
    "script": _g(f"{_SCRIPT} --logging-format", runs="-c --command", follows=False),
    "su": _g("-s -g -G -w --shell --group --supp-group", runs="-c --command", follows=False),
    "runuser": _g(_RUNUSER, runs="-c --command"),
    "chroot": _g(operands=1),
    "gosu": _g(operands=1),
    "su-exec": _g(operands=1),
    "fakeroot": _g("-l -s -i -b --lib --faked"),
    "proxychains": _g("-f"),
    "proxychains4": _g("-f"),
    "strace": _g("-o -e -p -s -u -a -b -E -I -O -P -S -X --output --trace --string-limit"),
    "ltrace": _g("-o -e -p -s -u -a -n -A -D -F -l -w --output"),
    "watch": _g("-n -q --interval --equexit", joins=True),
}
for _name in names(
    "nohup setsid chronic unbuffer builtin busybox toybox catchsegv eatmydata nocache "
    "torsocks dbus-run-session"
):
    GRAMMARS[_name] = _g()

# Wrappers whose options are not modelled: every word after them may be the command.
GUESSED = names(
    "nsenter unshare setpriv firejail bwrap proot systemd-run numactl prlimit cgexec faketime "
    "rlwrap parallel sem tsp nq entr chpst setuidgid envdir softlimit pkexec sg newgrp "
    "trickle xvfb-run dbus-launch daemonize start-stop-daemon tini dumb-init valgrind gdb ssh "
    "at batch caffeinate systemd-inhibit flatpak-spawn s6-setuidgid with-contenv lxc-attach "
    "machinectl schroot firejail-shell unshare-user run-one run-this-one ts pv"
)
SHELLS = names("sh bash zsh dash ksh mksh ash yash posh fish rbash")
_SHELL_VALUED = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
# Git configuration whose value is a program git runs (through the shell).
_GIT_PROGRAMS = re.compile(
    r"^(core\.(pager|editor|fsmonitor|sshcommand|askpass|hookspath)|pager\..*|sequence\.editor"
    r"|diff\.external|diff\..*\.(textconv|command)|filter\..*|merge\..*\.driver|gpg(\..*)?\.program"
    r"|credential(\..*)?\.helper|remote\..*\.(uploadpack|receivepack)|uploadpack\..*)$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Unwrapped:
    """What a wrapper runs: a command at a word index, command lines, or (options unknown)
    any of several words."""

    command: int | None = None
    lines: tuple[str, ...] = ()
    guesses: tuple[int, ...] = ()


def unwrap(words: Sequence[str], at: int) -> Unwrapped | None:
    """What the wrapper at `words[at]` runs; None when it is not a wrapper."""
    name = basename(words[at])
    if name in SHELLS:
        return _shell(words, at)
    if name in GUESSED:
        rest = range(at + 1, len(words))
        lines = tuple(words[i] for i in rest if any(c in words[i] for c in " \t\n;|&"))
        return Unwrapped(None, lines, tuple(i for i in rest if not words[i].startswith("-")))
    grammar = GRAMMARS.get(name)
    if grammar is None:
        return None
    return _read(name, grammar, words, at)


def _read(name: str, g: Grammar, words: Sequence[str], at: int) -> Unwrapped:
    lines: list[str] = []
    i, n = at + 1, len(words)
    quiet = False  # command -v: names a command, runs nothing
    while i < n:
        word = words[i]
        if word == "--":
            i += 1
            break
        if g.assigns and _assigns(word):
            i += 1
            continue
        if not word.startswith("-"):
            break
        quiet = quiet or (name == "command" and any(c in word for c in "vV"))
        i = _option(g, words, i, lines)
    while g.assigns and i < n and _assigns(words[i]):  # `env -- X=1 rm`, `time X=1 rm`
        i += 1
    i += g.operands
    lines.extend(_runs_anywhere(g, words, i))
    if name == "env" and lines:
        tail = " ".join(shlex.quote(w) for w in words[i:])
        return Unwrapped(None, tuple(f"{line} {tail}".strip() for line in lines))
    if g.joins:
        return Unwrapped(None, (*lines, " ".join(words[i:])) if i < n else tuple(lines))
    runs = i < n and g.follows and not quiet and not words[i].startswith("-")
    return Unwrapped(i if runs else None, tuple(lines))


def _assigns(word: str) -> bool:
    """`X=1`: an assignment to the command's environment, not the command."""
    return "=" in word and not word.startswith("-")


def _option(g: Grammar, words: Sequence[str], i: int, lines: list[str]) -> int:
    """Step over the option at `words[i]` (and its value); command-line values go to `lines`."""
    word = words[i]
    following = words[i + 1] if i + 1 < len(words) else None
    if word.startswith("--"):
        key, eq, value = word.partition("=")
        if key in g.runs:
            if eq or following is not None:
                lines.append(value if eq else str(following))
            return i + (1 if eq else 2)
        return i + (2 if key in g.valued and not eq else 1)
    for k in range(1, len(word)):
        option, attached = f"-{word[k]}", word[k + 1 :]
        if option in g.runs:
            if attached or following:
                lines.append(attached or str(following))
            return i + (1 if attached else 2)
        if option in g.valued:
            return i + (1 if attached else 2)
    return i + 1


def _runs_anywhere(g: Grammar, words: Sequence[str], start: int) -> list[str]:
    """`flock lk -c 'cmd'`: options that run a command line, after the operands too."""
    found: list[str] = []
    for i in range(start, len(words) - 1):
        if words[i] in g.runs:
            found.append(words[i + 1])
    return found


def _shell(words: Sequence[str], at: int) -> Unwrapped:
    """`bash -xc -- 'line'`: with -c, the first operand is the command line."""
    i, n, has_c = at + 1, len(words), False
    while i < n:
        word = words[i]
        if word in ("--", "-"):
            i += 1
            break
        if word in _SHELL_VALUED:
            i += 2
            continue
        if len(word) > 1 and word[0] in "-+":
            has_c = has_c or (word[0] == "-" and not word.startswith("--") and "c" in word)
            i += 1
            continue
        break
    return Unwrapped(None, (words[i],) if has_c and i < n else ())


def carried(name: str, words: Sequence[str]) -> tuple[list[str], list[tuple[int, int]]]:
    """Command lines and command word ranges carried in the arguments of a non-wrapper:
    `eval`, `trap 'line'`, `find -exec ... ;` and `git -c alias.x='!line'`.

    `words` are the arguments (the command word excluded); ranges index into them.
    """
    if name == "eval":
        return ([" ".join(words)] if words else []), []
    if name == "trap":
        operands = [w for w in words if not w.startswith("-")]
        return operands[:1], []
    if name in ("find", "fd", "fdfind"):
        return [], _exec_bodies(words)
    if name == "git":
        return _git_programs(words), []
    return [], []


def _exec_bodies(words: Sequence[str]) -> list[tuple[int, int]]:
    bodies: list[tuple[int, int]] = []
    starters = {"-exec", "-execdir", "-ok", "-okdir", "-x", "--exec", "-X", "--exec-batch"}
    i = 0
    while i < len(words):
        if words[i] in starters:
            end = i + 1
            while end < len(words) and words[end] not in (";", "+"):
                end += 1
            if end > i + 1:
                bodies.append((i + 1, end))
            i = end
        i += 1
    return bodies


def _git_programs(words: Sequence[str]) -> list[str]:
    """Programs `git -c key=value` hands to the shell (aliases starting with !, pagers...)."""
    lines: list[str] = []
    for i, word in enumerate(words):
        setting = None
        if word == "-c" and i + 1 < len(words):
            setting = words[i + 1]
        elif word.startswith("-c") and len(word) > 2:
            setting = word[2:]
        if setting is None or "=" not in setting:
            continue
        key, _, value = setting.partition("=")
        if value.startswith("!"):
            lines.append(value[1:])
        elif _GIT_PROGRAMS.match(key):
            lines.append(value)
    return lines


INTERPRETERS = names(
    "python python2 python3 perl ruby node nodejs php lua luajit awk gawk mawk nawk busybox-awk "
    "Rscript tclsh"
)
# A string handed to the shell from inside a program: os.system('...'), system("..."),
# subprocess.run("...", shell=True), `...` and qx{...} in Perl, Ruby and PHP.
_SHELL_CALL = re.compile(
    r"(?:system|popen|exec\w*|spawn\w*|check_output|check_call|getoutput|getstatusoutput"
    r"|call|run|Popen|shell_exec|passthru)\s*\(\s*[rbuf]?(['\"])(.*?)(?<!\\)\1",
    re.S,
)
_BACKTICKS = re.compile(r"`([^`]+)`|qx\{([^}]*)\}|qx\(([^)]*)\)")


def shell_strings(name: str, words: Sequence[str]) -> list[str]:
    """Command lines an interpreter's code hands to the shell, as far as they can be seen
    (a guess: the caller reads them tolerantly)."""
    if name not in INTERPRETERS and not name.startswith(("python", "perl", "ruby", "php")):
        return []
    code = "\n".join(words)
    found = [m.group(2) for m in _SHELL_CALL.finditer(code)]
    found += [next(g for g in m.groups() if g) for m in _BACKTICKS.finditer(code)]
    return found
