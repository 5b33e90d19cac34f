"""How the soul reads a command line: which commands run, under what, spelled how."""

from __future__ import annotations

import contextlib
import time

import pytest

from soul import (
    Action,
    Soul,
    UnparseableCommand,
    classify,
    denied_by,
    provably_read_only,
)
from soul.shell import parse_command


def ran(line: str) -> list[str]:
    """The names of every command the line runs, nested ones included, in reading order."""
    return [c.name for s in parse_command(line) for c in s.commands]


@pytest.mark.parametrize(
    ("line", "names"),
    [
        ("timeout -s KILL 5 rm -rf x", ["rm"]),
        ("timeout --signal=KILL -k 1 5s rm x", ["rm"]),
        ("xargs -a list.txt rm -f", ["rm"]),
        ("xargs -I {} -n 1 rm {}", ["rm"]),
        ("nice -n 5 rm x", ["rm"]),
        ("env -u X -C dir A=1 rm x", ["rm"]),
        ("stdbuf -o0 -e L rm x", ["rm"]),
        ("sudo -u root -- rm x", ["rm"]),
        ("busybox rm x", ["rm"]),
        ("command -v rm", ["command"]),
        ("sh -c -- 'rm -rf x'", ["sh", "rm"]),
        ("bash -o errexit -xc 'rm x' name", ["bash", "rm"]),
        ("env -S 'rm -f' f", ["env", "rm"]),
        ("script -qc 'rm x' /dev/null", ["script", "rm"]),
        ("flock /tmp/lk -c 'rm x'", ["flock", "rm"]),
        ("watch -n 1 rm x", ["watch", "rm"]),
        ("find . -name '*.tmp' -exec rm -f {} +", ["rm", "find"]),
        ("git -c alias.x='!rm -rf x' x", ["git", "rm"]),
        ("git -c core.pager='rm f' log", ["git", "rm"]),
        ("trap 'rm f' EXIT", ["trap", "rm"]),
        ("eval 'rm f'", ["eval", "rm"]),
        ("bash <<< 'rm f'", ["bash", "rm"]),
        ("bash <<EOF\nrm -rf x\nEOF", ["bash", "rm"]),
        ("cat <<'EOF'\nrm -rf x\nEOF", ["cat"]),
        ("rm${IFS}-rf${IFS}x", ["rm"]),
        ("{rm,-rf,x}", ["rm"]),
        ("$'\\x72m' -f f", ["rm"]),
        ("r''m -f f", ["rm"]),
        ("while rm x; do :; done", ["rm", ":"]),
        ("function f { rm x; }", ["rm"]),
        ("echo sudo is denied", ["echo"]),
        ("for f in *.log; do cat $f; done", ["cat"]),
        ("coproc job (rm -rf x)", ["coproc", "rm"]),  # a named coprocess runs its subshell
        ("bash <<{a,b}\nrm -rf x\n{a,b}", ["bash", "rm"]),  # a delimiter is not brace-expanded
        ("cat <<a${IFS}b\nrm -rf x\na${IFS}b\nls", ["cat", "ls"]),  # nor split
    ],
)
def test_the_command_that_really_runs_is_read(line: str, names: list[str]) -> None:
    assert ran(line) == names


def test_unknown_wrappers_read_every_word_that_may_be_the_command() -> None:
    (statement,) = parse_command("setpriv --reuid 0 rm -rf x")
    by_name = {c.name: c for c in statement.commands}
    assert {"setpriv", "0", "rm"} <= set(by_name)
    assert by_name["rm"].guessed
    assert by_name["rm"].wrappers == ("setpriv",)


def test_known_wrappers_name_the_command_they_run() -> None:
    (statement,) = parse_command("flock -w 5 /tmp/lk rm -rf x")
    (command,) = statement.commands
    assert (command.name, command.wrappers, command.guessed) == ("rm", ("flock",), False)


def test_a_command_word_known_only_at_run_time_is_marked() -> None:
    for line in ("$(echo rm) -rf x", "`echo rm` x", "$c x", "/bin/r[m] x", "r? x"):
        command = parse_command(line)[0].commands[0]
        assert command.dynamic, line


@pytest.mark.parametrize(
    ("line", "token", "spelling"),
    [
        ("rm -rf //", "//", "/"),
        ("rm -rf /./", "/./", "/"),
        ("rm -rf /workspace/../", "/workspace/../", "/"),
        ("rm -rf ..", "..", "/"),
        ("rm -rf ${HOME}/", "${HOME}/", "~"),
        ("rm -rf ~/x/..", "~/x/..", "$HOME"),
        ("cd / && rm -rf .", ".", "/"),
        ("cd /; rm -rf *", "*", "/*"),
        ("cd; rm -rf *", "*", "~/*"),
        ("d=/; rm -rf $d", "$d", "/"),
        ("dd of=/dev//sda", "of=/dev//sda", "of=/dev/sda"),
    ],
)
def test_paths_are_spelled_every_way_the_shell_reads_them(
    line: str, token: str, spelling: str
) -> None:
    statement = parse_command(line)[-1]
    index = statement.tokens.index(token)
    assert spelling in statement.spellings[index]


@pytest.mark.parametrize(
    ("line", "denied"),
    [
        ("cat <<EOF | sh\nrm -rf /\nEOF", True),  # a shell reads the document
        ("bash <<EOF\nrm -rf ~\nEOF", True),
        ("cat <<EOF\nrm -rf /\nEOF", False),  # only data
        ("echo 'rm -rf /' > notes.txt", False),
        ('echo "it\'s" | sh', False),  # text that is no command line is skipped
        ("echo reboot | sh", True),  # one word is a command line too
        ("echo $'rm -rf /\\n\"' | sh", True),  # it runs before the next line fails to read
        ("printf 'rm -rf /\\n\"\\n' | sh", True),  # printf writes the line breaks
        ("echo -e 'ls\\nrm -rf ~' | sh", True),
        ("bash < 'rm -rf /'", False),  # a file the shell reads is named, not fed
    ],
)
def test_text_a_shell_reads_is_read_as_commands(v1: Soul, line: str, denied: bool) -> None:
    assert (denied_by(v1, line) is not None) is denied


def test_cd_to_an_unknown_place_loses_track() -> None:
    statement = parse_command('cd "$X"; rm -rf .')[-1]
    assert statement.spellings[statement.tokens.index(".")] == (".",)


@pytest.mark.parametrize(
    ("command", "tier"),
    [
        ("sort -o f a.txt", "T2"),  # a T0 rule names sort, but -o writes
        ("find . -fprint out", "T2"),
        ("PATH=. ls", "T2"),
        ("PATH=.; ls", "T2"),
        ("for PATH in .; do ls; done", "T2"),
        ("for PATH; do ls; done", "T2"),  # a loop over the arguments sets PATH as well
        ("bash -c 'ls'", "T2"),
        ("c=rm; $c -rf x", "T3"),
        ("$(echo ls) x", "T3"),  # any command: the worst case
        ("/bin/r[m] x", "T3"),
        ("timeout -s KILL 5 rm x", "T3"),
        ("flock /tmp/lk rm x", "T3"),
        ("sh -c -- 'rm -rf x'", "T3"),
        ("git -c alias.x='!rm x' x", "T3"),
        ("timeout 5 ls", "T0"),
        ("for f in *.log; do cat $f; done", "T0"),
    ],
)
def test_tiers_follow_the_reading(v1: Soul, command: str, tier: str) -> None:
    assert classify(v1, Action("shell.exec", command=command)).tier == tier


PATHOLOGICAL = {
    "nested substitutions": "echo " + "$(" * 300 + "x" + ")" * 300,
    "nested quoted substitutions": "echo " + '"$(' * 200 + "x" + ')"' * 200,
    "nested parameters": "echo " + "${a:-${b:-" * 150 + "}}" * 150,
    "a wrapper chain": "nice " * 40 + "rm -rf /",
    "unknown wrappers": "setpriv unshare firejail " * 200 + "rm -rf /",
    "a brace bomb": "{rm,ls}" * 30,
    "deep braces": "echo " + "{" * 500 + "a,b" + "}" * 500,
    "many statements": "ls;" * 700,
    "a long pipeline": "cat x |" * 600 + " cat",
    "many find bodies": "find . " + "-exec rm {} ; " * 300,
    "many here-documents": "cat " + "<<A " * 300 + "\n" + "A\n" * 300,
    "IFS splits": "rm" + "${IFS}x" * 500,
}


@pytest.mark.parametrize("line", PATHOLOGICAL.values(), ids=PATHOLOGICAL.keys())
def test_a_pathological_line_is_read_or_refused_quickly(v1: Soul, line: str) -> None:
    """Never an exception other than UnparseableCommand (governance denies those), and no
    line keeps the event loop busy (the budget is generous: CI machines are shared)."""
    started = time.perf_counter()
    for check in (
        lambda: denied_by(v1, line),
        lambda: classify(v1, Action("shell.exec", command=line)),
        lambda: provably_read_only(line),
    ):
        with contextlib.suppress(UnparseableCommand):
            check()
    assert time.perf_counter() - started < 2.0
    assert not provably_read_only(line) or "rm" not in line
