"""Which git command lines are proven to only read, and the reason given when one may write:
the words on a card and in the logs."""

from __future__ import annotations

import string

import pytest

from soul import read_only_reason
from soul.git_reads import git_reason

READS = [
    "status",
    "log --oneline -5",
    "diff --stat HEAD~1",
    "show HEAD:a.txt",
    "blame a.txt",
    "ls-files",
    "ls-tree HEAD",
    "rev-parse HEAD",
    "rev-list --count HEAD",
    "describe --tags",
    "shortlog -sn",
    "cat-file -p HEAD",
    "merge-base a b",
    "for-each-ref refs/heads",
    "name-rev HEAD",
    "count-objects -v",
    "show-ref",
    "version",
    "grep -n TODO",
    "log --no-ext-diff -p",  # turning a program off is no option that runs one
    "log -O order.txt",  # only grep's -O runs a program
    "log -- a.txt",  # -- ends the options
]


@pytest.mark.parametrize("args", READS)
def test_a_reading_subcommand_only_reads(args: str) -> None:
    assert git_reason(args.split()) is None
    assert read_only_reason(f"git {args}") is None


@pytest.mark.parametrize(
    "flags",
    [
        "",
        "-C repo",
        "--no-pager",
        "-P",
        "--no-optional-locks",
        "--literal-pathspecs",
        "--glob-pathspecs",
        "--noglob-pathspecs",
        "--icase-pathspecs",
        "--no-replace-objects",
        "-C a --no-pager -C b -P",
    ],
)
def test_global_flags_that_change_nothing_are_read_through(flags: str) -> None:
    assert git_reason([*flags.split(), "log"]) is None
    assert git_reason([*flags.split(), "commit"]) == "git commit may write"


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        ("-c core.pager=rm log", "git -c is not proven read-only"),
        ("--git-dir=x log", "git --git-dir=x is not proven read-only"),
        ("-C", "git -C is not proven read-only"),  # -C without its folder
        ("commit -m x", "git commit may write"),
        ("file", "git file may write"),  # no git command: an alias the repository may define
        ("cat-", "git cat- may write"),
        ("log --output=x", "git log --output=x writes a file or runs a program"),
        ("log --out=x", "git log --out=x writes a file or runs a program"),  # a prefix
        ("log --e", "git log --e writes a file or runs a program"),  # the shortest prefix
        ("log --ext-diff", "git log --ext-diff writes a file or runs a program"),
        ("diff --textconv", "git diff --textconv writes a file or runs a program"),
        ("cat-file --filters HEAD:a", "git cat-file --filters writes a file or runs a program"),
        ("grep --open-files-in-pager=vi x", "git grep --open-files-in-pager=vi writes"),
        ("grep -Ovim x", "git grep -O runs a program"),
        ("remote add o url", "git remote with arguments may change or contact a remote"),
        ("remote -v show", "git remote with arguments may change or contact a remote"),
        ("reflog expire --all", "git reflog expire rewrites the reflog"),
        ("reflog delete HEAD@{1}", "git reflog delete rewrites the reflog"),
        ("reflog drop", "git reflog drop rewrites the reflog"),
    ],
)
def test_a_line_that_may_write_says_why(args: str, reason: str) -> None:
    assert (git_reason(args.split()) or "").startswith(reason)
    assert read_only_reason(f"git {args}") is not None


@pytest.mark.parametrize("args", ["", "-C x", "remote", "remote -v", "remote --verbose", "reflog"])
def test_bare_listings_only_read(args: str) -> None:
    assert git_reason(["-C", "x"] if args == "-C x" else args.split()) is None


@pytest.mark.parametrize(
    "args",
    [
        "branch",
        "branch -a",
        "branch -rv",
        "branch -l 'feat*'",
        "branch -i --list x",
        "branch --list feat",
        "branch --all --remotes --verbose --show-current",
        "branch --abbrev=7 --no-abbrev --column --no-column --color --no-color",
        "branch --ignore-case --omit-empty",
        "branch --contains HEAD",
        "branch -a --contains HEAD",
        "branch -v --merged main",
        "branch --no-contains HEAD --merged main --no-merged x --points-at HEAD",
        "branch --sort=-refname --format=%(refname)",
        "branch --sort refname",
        "branch --contains",
        "tag",
        "tag -l 'v*'",
        "tag -n5",
        "tag -n9 -i -l v1",
        "tag --list v1",
    ],
)
def test_branch_and_tag_read_when_they_list(args: str) -> None:
    assert git_reason(args.split()) is None


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        ("branch topic", "git branch topic creates it"),
        ("branch --contains HEAD topic", "git branch topic creates it"),
        ("branch --contains=HEAD topic", "git branch topic creates it"),
        ("branch --sort -refname", "git branch -refname is not a listing option"),
        ("branch --verbose topic", "git branch topic creates it"),
        ("branch -d topic", "git branch -d is not a listing option"),
        ("branch -lD x", "git branch -lD is not a listing option"),
        ("branch --delete x", "git branch --delete is not a listing option"),
        ("branch --set-upstream-to=o", "git branch --set-upstream-to=o is not a listing option"),
        ("branch -", "git branch - creates it"),
        ("tag v1", "git tag v1 creates it"),
        ("tag -a v1", "git tag -a is not a listing option"),
        ("tag -n5 v1", "git tag v1 creates it"),
        ("tag --show-current", "git tag --show-current is not a listing option"),
    ],
)
def test_branch_and_tag_that_may_create_or_delete_say_why(args: str, reason: str) -> None:
    assert git_reason(args.split()) == reason


@pytest.mark.parametrize(("sub", "letters"), [("branch", "arlvi"), ("tag", "lin0123456789")])
def test_any_other_short_option_of_branch_or_tag_is_refused(sub: str, letters: str) -> None:
    others = [c for c in string.ascii_letters + string.digits if c not in letters]
    for letter in others:
        assert git_reason([sub, f"-{letter}"]) == f"git {sub} -{letter} is not a listing option"
    assert git_reason([sub, f"-{letters}"]) is None
