"""Red team: disguised destructive commands are never proven read-only, denylist evasions are
refused, and the everyday read-only commands stay provably read-only (so they stay fast)."""

from __future__ import annotations

from pathlib import Path

import pytest

from soul import (
    Action,
    Soul,
    UnparseableCommand,
    classify,
    denied_by,
    provably_read_only,
    read_only_reason,
)

DATA = Path(__file__).resolve().parents[1] / "data"


def commands(name: str) -> list[str]:
    """The commands in a tests/data list: one a line, # comments and blank lines skipped."""
    text = (DATA / name).read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line.strip() and not line.startswith("#")]


REDTEAM = commands("redteam_shell.txt")
EVASIONS = commands("denylist_evasions.txt")

READ_ONLY = [
    "ls",
    "ls -la",
    "ls -la /workspace",
    "ls *.py",
    "ls -R x ~",
    "/bin/ls -l",
    "\\ls",
    "'ls' -a",
    "ls -la # what is here",
    "cat a.txt",
    "/usr/bin/cat a.txt b.txt",
    "cat < a.txt",
    "head -n 5 a.txt",
    "tail -n 20 log.txt",
    "wc -l *.py",
    "grep -rn TODO .",
    "grep -i 'rm -rf /' notes.md",
    "grep 'error$' log.txt",
    "egrep 'a|b' a.txt",
    "find . -name '*.py'",
    "find x -maxdepth 1 -type f -newer a.txt -print",
    "stat a.txt",
    "du -sh .",
    "df -h",
    "pwd",
    "echo hello",
    "echo 'rm -rf /' is a bad idea",
    "echo '$HOME' {a,b}",
    "printf '%s\\n' a b",
    "git status",
    "git status --short",
    "git log --oneline -10",
    "git diff --stat HEAD~1",
    "git show HEAD:a.txt",
    "git branch -a",
    "git branch --list 'feat*'",
    "git tag -l 'v*'",
    "git remote -v",
    "git blame a.txt",
    "git ls-files",
    "git -C x rev-parse HEAD",
    "git --no-pager log -p -1",
    "cat a.txt | grep x | wc -l",
    "ls 2>/dev/null",
    "ls > /dev/null 2>&1",
    "grep -q x a.txt || echo none",
    "test -f a.txt && cat a.txt",
    "cd x && ls",
    "ls; pwd",
    "sort -u a.txt | uniq -c",
    "cut -d: -f1 a.txt | tr a-z A-Z",
    "diff a.txt b.txt",
    "sha256sum a.txt",
    "tree -L 2",
    "file a.txt",
    "date +%Y-%m-%d",
    "uname -a",
    "which python3",
    "realpath a.txt",
    "jq . data.json",
    "rg -n TODO",
    "timeout 5 ls",
    "nice -n 5 cat a.txt",
    "stdbuf -o0 grep x a.txt",
    "wc -w <<< 'a b c'",
    "seq 1 10 | column",
]


def test_the_lists_are_big_enough() -> None:
    assert len(REDTEAM) >= 150
    assert len(set(REDTEAM)) == len(REDTEAM)
    assert len(READ_ONLY) >= 40
    assert len(EVASIONS) >= 60


@pytest.mark.parametrize("command", REDTEAM)
def test_a_disguised_destructive_command_is_never_proven_read_only(v1: Soul, command: str) -> None:
    assert not provably_read_only(command)
    assert read_only_reason(command)
    try:
        tier = classify(v1, Action("shell.exec", command=command)).tier
    except UnparseableCommand:
        return  # governance refuses what it cannot read
    assert tier != "T0", "the Soul would call it read-only"


@pytest.mark.parametrize("command", EVASIONS)
def test_a_denylist_evasion_is_refused(v1: Soul, command: str) -> None:
    assert denied_by(v1, command) is not None
    assert not provably_read_only(command)


@pytest.mark.parametrize("command", READ_ONLY)
def test_an_everyday_read_stays_provably_read_only(v1: Soul, command: str) -> None:
    assert read_only_reason(command) is None
    assert denied_by(v1, command) is None
    assert classify(v1, Action("shell.exec", command=command)).tier in ("T0", "T1", "T2")


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("ls $(pwd)", "substitution"),
        ("c=ls; $c", "run time"),
        ("/bin/l[s]", "run time"),
        ("sh -c 'ls'", "sh is not a known read-only command"),
        ("flock /tmp/lk ls", "flock"),
        ("xargs ls < list.txt", "xargs"),
        ("ls > out.txt", "writes to out.txt"),
        ("ls &", "background"),
        ("./ls", "not a system command"),
        ("find . -delete", "-delete"),
        ("git branch topic", "creates it"),
        ("PATH=. ls", "environment"),
        ("", "no command"),
        ("echo 'unclosed", "cannot read"),
    ],
)
def test_the_reason_says_what_is_not_proven(command: str, reason: str) -> None:
    assert reason in (read_only_reason(command) or "")
