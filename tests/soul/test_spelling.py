"""The other spellings of a shell word, by which the denylist matches: `//`, `/.`,
`/workspace/..` and `.` after `cd /` all name `/`; `${HOME}`, `"$HOME"` and `~` all name
the home directory; what cannot be known is left unspelled."""

from __future__ import annotations

import pytest

from soul.spelling import HOME, WORKSPACE, Context, canonical
from soul.words import Word


@pytest.mark.parametrize(
    ("path", "cwd", "spelled"),
    [
        ("", WORKSPACE, None),
        ("a\0b", WORKSPACE, None),
        ("~", None, "~"),
        ("~/", None, "~"),
        ("~//a/./b/", None, "~/a/b"),
        ("~/XX", None, "~/XX"),
        ("~/a/../b", None, "~/b"),
        ("~/a/..", None, "~"),
        ("~/..", None, None),  # above home: not known
        ("~/a/../..", None, None),
        ("~/./..", None, None),  # "." is no step down
        ("~//..", None, None),  # nor is an empty part
        ("~user/x", WORKSPACE, None),
        ("/", None, "/"),
        ("//", None, "/"),
        ("/.", None, "/"),
        ("///a//b/", None, "/a/b"),
        ("/XX/a", None, "/XX/a"),
        ("/workspace/..", None, "/"),
        ("a/b", WORKSPACE, "/workspace/a/b"),
        ("a/b", None, None),
        (".", "/", "/"),
        ("..", "/workspace", "/"),
        ("a", "~", "~/a"),
        ("..", "~", None),
    ],
)
def test_a_path_is_made_absolute_and_normal_or_left_unknown(
    path: str, cwd: str | None, spelled: str | None
) -> None:
    assert canonical(path, cwd) == spelled


def var(name: str) -> Word:
    return Word(f"${name}", expands=True, param=name)


def test_a_word_keeps_its_text_first_and_adds_its_other_spellings() -> None:
    assert Context().spell(Word("//")) == ("//", "/")
    assert Context().spell(Word("/")) == ("/",)
    assert Context().spell(var("HOME")) == ("$HOME", "~", "/workspace/$HOME")
    assert Context().spell(Word("~/x", tilde=True)) == ("~/x", "$HOME/x")
    assert Context().spell(Word("${HOME}/x", expands=True)) == (
        "${HOME}/x",
        "~/x",
        "/workspace/${HOME}/x",
        "$HOME/x",
    )
    # above home is not known; read as a name in the working directory it climbs to /
    assert Context().spell(Word("$HOME/../..", expands=True)) == ("$HOME/../..", "~/../..", "/")


def test_an_unknown_variable_is_left_as_written() -> None:
    # (and as a name in the working directory, as any word: matching more is no harm)
    assert Context().spell(var("X")) == ("$X", "/workspace/$X")
    assert Context().spell(Word("$X/a", expands=True)) == ("$X/a", "/workspace/$X/a")


def test_an_option_has_no_path_spellings() -> None:
    assert Context().spell(Word("-rf")) == ("-rf",)
    assert Context().spell(Word("--dir=/")) == ("--dir=/",)


def test_a_setting_is_spelled_on_its_right_side() -> None:
    assert Context().spell(Word("of=//x")) == ("of=//x", "of=/x", "/workspace/of=/x")
    assert Context().spell(Word("a/b=//x")) == ("a/b=//x", "/workspace/a/b=/x")  # a path
    assert Context().spell(Word("=//x")) == ("=//x", "/workspace/=/x")
    assert Context().spell(Word("of=~user")) == ("of=~user", "/workspace/of=~user")
    assert Context(cwd=None).spell(Word("of=/x")) == ("of=/x",)


def test_cd_is_followed_and_lost_where_it_cannot_be_known() -> None:
    here = Context()
    here.change_directory([Word("/")])
    assert here.spell(Word(".")) == (".", "/")
    here.change_directory([Word("-L"), Word("etc")])
    assert here.cwd == "/etc"
    here.change_directory([])
    assert here.cwd == HOME
    here.change_directory([Word("-P")])
    assert here.cwd == HOME
    here.change_directory([Word("-")])
    assert here.cwd is None
    assert here.spell(Word("x")) == ("x",)
    lost = Context()
    lost.change_directory([var("X")])
    assert lost.cwd is None
    known = Context(variables={"HOME": HOME, "D": "/srv"})
    known.change_directory([var("D")])
    assert known.cwd == "/srv"
    known.change_directory([Word("*", globs=True)])
    assert known.cwd is None


def test_an_assignment_is_remembered_and_a_run_time_one_forgotten() -> None:
    line = Context()
    line.assign(Word("d=/", assignment=True))
    assert line.spell(var("d")) == ("$d", "/", "/workspace/$d")
    line.assign(Word("d=$(pwd)", expands=True, nested=("pwd",), assignment=True))
    assert line.spell(var("d")) == ("$d", "/workspace/$d")
    line.assign(Word("e+=/", assignment=True))
    assert line.variables["e"] == "/"
    line.assign(Word("DX+=/", assignment=True))
    assert line.variables["DX"] == "/"
    line.assign(Word("e=$X", expands=True, assignment=True))
    assert "e" not in line.variables
    line.assign(Word("f=/", assignment=True))
    line.assign(Word("f=`pwd`", nested=("pwd",), assignment=True))
    assert "f" not in line.variables
    line.assign(Word("a[0]=/", assignment=True))
    assert "a[0]" not in line.variables
    line.variables["a[1]"] = "/"
    line.assign(Word("a[1]=/", assignment=True))
    assert "a[1]" not in line.variables  # an element: forgotten, not kept


def test_a_known_value_and_an_unknown_one() -> None:
    line = Context(variables={"HOME": HOME, "D": "/srv"})
    assert line.value(var("D")) == "/srv"
    assert line.value(var("X")) is None
    assert line.value(Word("/etc")) == "/etc"
    assert line.value(Word("*.txt", globs=True)) is None
