"""How the quoted and expanded parts of a word are read: "...", $'...', $NAME and ${...},
the substitutions and the command lines nested in them, and the lines refused as unreadable."""

from __future__ import annotations

import re
import time

import pytest

from soul.errors import BeyondReading, UnparseableCommand
from soul.lexer import lex
from soul.shell import parse_command
from soul.words import Word


def argument(line: str) -> Word:
    """The one word after `echo` in `line`."""
    tokens = lex(line)
    assert [t.text for t in tokens[:1]] == ["echo"]
    (word,) = tokens[1:]
    assert isinstance(word, Word)
    return word


def ran(line: str) -> list[str]:
    """The names of every command the line runs, nested ones included."""
    return [c.name for s in parse_command(line) for c in s.commands]


@pytest.mark.parametrize(
    ("line", "text"),
    [
        ('echo "a\\$b\\`c\\"d\\\\e\\f"', 'a$b`c"d\\e\\f'),  # \ escapes only $ ` " \ there
        ('echo "a\\\nb"', "ab"),  # and a backslash-newline joins
        ('echo "C:\\Xdir"', "C:\\Xdir"),  # before anything else, it is a character
        ("echo $'a\\'b'", "a'b"),
        ('echo $"x"', "x"),
        ("echo $''", ""),
        ('echo ""', ""),
        ("echo '$(rm x)'", "$(rm x)"),
    ],
)
def test_quoting_is_removed_and_quoted_text_runs_nothing(line: str, text: str) -> None:
    word = argument(line)
    assert (word.text, word.quoted, word.expands, word.nested) == (text, True, False, ())


@pytest.mark.parametrize(
    ("line", "text"), [("echo $", "$"), ('echo "$"', "$"), ("echo a$", "a$"), ("echo $%", "$%")]
)
def test_a_dollar_that_starts_nothing_is_a_character(line: str, text: str) -> None:
    word = argument(line)
    assert (word.text, word.expands, word.param) == (text, False, None)


@pytest.mark.parametrize(
    ("line", "param"),
    [
        ("echo $HOME", "HOME"),
        ("echo ${HOME}", "HOME"),
        ('echo "$HOME"', "HOME"),
        ("echo $HOME/x", None),  # more than the parameter
        ("echo $a$b", None),
        ("echo ${#x}", None),
        ("echo ${x:-y}", None),
        ("echo $1", None),
        ("echo $?", None),
        ("echo $@", None),
        ("echo $-", None),
    ],
)
def test_a_word_that_is_one_parameter_names_it(line: str, param: str | None) -> None:
    word = argument(line)
    assert word.expands
    assert word.param == param


@pytest.mark.parametrize(
    ("line", "spelled"),
    [
        ("echo ${IFS}a", ["echo", "a"]),
        ("echo a${IFS:0:1}b", ["echo", "a", "b"]),  # any expansion of IFS splits
        ("echo a$IFS", ["echo", "a"]),
        ('echo a"$IFS"b', ["echo", "a$IFSb"]),  # quoted, it does not
        ("echo a${IFSX}b", ["echo", "a${IFSX}b"]),
    ],
)
def test_an_unquoted_ifs_splits_the_word(line: str, spelled: list[str]) -> None:
    assert [t.text for t in lex(line)] == spelled


@pytest.mark.parametrize(
    ("line", "nested"),
    [
        ("echo `rm \\`x\\` \\$y \\\\z`", ("rm `x` $y \\z",)),  # \ ` $ unescaped
        ("echo $((1+$(rm x)))", ("rm x",)),
        ("echo $(( $(rm x) + `id` ))", ("rm x", "id")),
        ("echo $[1+$(rm x)]", ("rm x",)),
        ("echo ${x:-$(rm y)}", ("rm y",)),
        ('echo "${x:-`rm y`}"', ("rm y",)),
        ("echo $(echo ')' ; rm x)", ("echo ')' ; rm x",)),  # a quoted ) closes nothing
        ('echo $(echo ")" `)` ${x%)} $(ls) $x)', ('echo ")" `)` ${x%)} $(ls) $x',)),
        ("echo $(a \\) b)", ("a \\) b",)),
        ("echo $?$(rm x)", ("rm x",)),
        ("echo $(ls a\\\\)", ("ls a\\\\",)),  # an escaped backslash escapes no )
        ("echo $( (rm x) )", (" (rm x) ",)),  # a pair inside closes nothing
        ("echo $(echo `` `)` x)", ("echo `` `)` x",)),
        ("echo `ls a\\\\`", ("ls a\\",)),  # an escaped backslash escapes no backtick
        ("echo $(a $'b' $c)", ("a $'b' $c",)),
    ],
)
def test_a_substitution_keeps_the_line_it_runs(line: str, nested: tuple[str, ...]) -> None:
    word = argument(line)
    assert (word.nested, word.expands) == (nested, True)


def test_a_here_document_runs_its_substitutions_but_not_escaped_ones() -> None:
    body = "\\$(rm x) $(ls) `pwd` ${a:-$(id)} \\`rm y\\` ID=X$(whoami) \\\\$(date)"
    word = lex(f"cat <<E\n{body}\nE")[2]
    assert isinstance(word, Word)
    assert word.nested == ("ls", "pwd", "id", "whoami", "date")


def test_in_a_here_document_dollar_quote_is_no_quoting() -> None:
    word = lex("cat <<E\n$'$(rm x)' $\"$(id)\"\nE")[2]  # bash runs both
    assert isinstance(word, Word)
    assert word.nested == ("rm x", "id")


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ('echo "a', 'a " is not closed'),
        ('echo "a\\"', 'a " is not closed'),  # the last quote is escaped
        ('echo "a\\', 'a " is not closed'),
        ('echo "$(a"', 'a " is not closed'),
        ("echo `a", "a ` is not closed"),
        ('echo "`a"', "a ` is not closed"),
        ("echo $(a `b)", "a ` is not closed"),
        ("echo $(a", "a ( is not closed"),
        ("echo $((1+2)", "a ( is not closed"),
        ("echo $(echo 'a)", "a ' is not closed"),
        ("echo ${x:-'}", "a ' is not closed"),
        ("echo $'a", "a $' is not closed"),
        ("echo $'a\\'", "a $' is not closed"),
        ("echo ${a", "a { is not closed"),
        ("echo $[a", "a [ is not closed"),
    ],
)
def test_a_part_left_open_is_refused_and_named(line: str, why: str) -> None:
    with pytest.raises(UnparseableCommand, match=f"^cannot read the command: {re.escape(why)}$"):
        lex(line)


@pytest.mark.parametrize(
    ("opening", "closing"),
    [("${x:-", "}"), ("$[", "]"), ("$((", "))"), ("$(", ")"), ("$(${x:-", "})")],
)
def test_every_kind_of_nesting_is_read_32_deep_and_refused_beyond(
    opening: str, closing: str
) -> None:
    lex("echo " + opening * (32 // len(closing)) + "x" + closing * (32 // len(closing)))
    with pytest.raises(BeyondReading, match=r"substitutions are nested too deeply$"):
        lex("echo " + opening * 33 + "x" + closing * 33)


def test_levels_behind_quotes_in_a_parameter_count_toward_the_bound() -> None:
    def nest(depth: int) -> str:
        return "${x:-" * depth + "x" + "}" * depth

    assert argument("echo ${y:-'" + nest(31) + "'}").expands  # 32 levels with the outer one
    with pytest.raises(BeyondReading, match=r"substitutions are nested too deeply$"):
        lex("echo ${y:-'" + nest(32) + "'}")


@pytest.mark.parametrize("opening", ["${x:-", "$[", "$(("])
def test_a_deep_nest_is_read_in_time_linear_in_its_depth(opening: str) -> None:
    """Each level was read twice (once stepped over, once for what it runs): 20 levels took
    7 s, 32 would have taken hours, with the Soul's reading of a /run line stuck meanwhile."""
    closing = {"${x:-": "}", "$[": "]", "$((": "))"}[opening]
    started = time.perf_counter()
    word = argument("echo " + opening * 24 + "$(rm x)" + closing * 24)
    assert time.perf_counter() - started < 1.0
    assert word.nested == ("rm x",)
    assert ran("echo " + opening * 24 + "$(rm x)" + closing * 24) == ["echo", "rm"]
