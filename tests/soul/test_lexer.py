"""How the lexer splits a line the way bash does: comments, continued lines, nesting bounds."""

from __future__ import annotations

import pytest

from soul.errors import BeyondReading, UnparseableCommand
from soul.lexer import lex
from soul.shell import parse_command
from soul.words import Word


def commands(line: str) -> list[tuple[str, tuple[str, ...]]]:
    """Each command the line runs, with its arguments, in reading order."""
    return [(c.name, c.args) for s in parse_command(line) for c in s.commands]


def nested(depth: int) -> str:
    """A word with `depth` command substitutions inside each other."""
    return "echo " + "$(" * depth + "x" + ")" * depth


@pytest.mark.parametrize(
    ("line", "ran"),
    [
        ("ls # rm -rf /", [("ls", ())]),
        ("ls # a note\nrm x", [("ls", ()), ("rm", ("x",))]),  # the comment ends with its line
        ("#!/bin/sh\nrm x", [("rm", ("x",))]),
        ("echo a#b", [("echo", ("a#b",))]),  # inside a word, # is a character
    ],
)
def test_a_comment_runs_to_the_end_of_its_line(line: str, ran: list[tuple[str, ...]]) -> None:
    assert commands(line) == ran


@pytest.mark.parametrize("line", ["rm \\\n-rf x", "rm \\\n -rf \\\n x", "rm\\\n -rf x"])
def test_a_backslash_newline_joins_the_lines(line: str) -> None:
    assert commands(line) == [("rm", ("-rf", "x"))]


def test_substitutions_are_read_32_deep_and_refused_beyond() -> None:
    assert lex(nested(32))[0].text == "echo"
    with pytest.raises(BeyondReading, match=r"substitutions are nested too deeply$"):
        lex(nested(33))


@pytest.mark.parametrize(
    ("line", "ran"),
    [
        ("diff <(ls a) f", [("diff", ("<(...)", "f")), ("ls", ("a",))]),
        ("tee >(wc -l) f", [("tee", (">(...)", "f")), ("wc", ("-l",))]),
    ],
)
def test_a_process_substitution_is_a_word_that_runs_its_line(
    line: str, ran: list[tuple[str, ...]]
) -> None:
    assert commands(line) == ran


@pytest.mark.parametrize(
    ("line", "tokens"),
    [
        ("f()", ("f", "()")),
        ("f ( \t)", ("f", "()")),  # a function's empty parentheses, blanks inside or not
        ("ls (", ("ls", "(")),
        ("ls ( ", ("ls", "(")),
        ("ls | )", ("ls", "|", ")")),  # only an opening parenthesis starts a pair
    ],
)
def test_empty_parentheses_are_one_operator(line: str, tokens: tuple[str, ...]) -> None:
    (statement,) = parse_command(line)
    assert statement.tokens == tokens


def test_a_here_document_left_open_at_the_end_is_refused() -> None:
    with pytest.raises(UnparseableCommand, match=r"^cannot read the command: a here-doc"):
        lex("cat <<EOF")


@pytest.mark.parametrize(
    ("line", "ran"),
    [
        ("cat << EOF\nrm x\nEOF\nls", [("cat", ("<<", "EOF")), ("ls", ())]),
        ("cat <<-EOF\n\trm x\n\tEOF\nls", [("cat", ("<<-", "EOF")), ("ls", ())]),
    ],
)
def test_a_here_document_is_data_up_to_its_delimiter(line: str, ran: list[tuple[str, ...]]) -> None:
    assert commands(line) == ran


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("cat <<", "a here-document needs a delimiter"),
        ("cat <<  ", "a here-document needs a delimiter"),
        ("cat <<\nx", "a here-document needs a delimiter"),
        ("cat <<;", "a here-document needs a delimiter"),
        ("cat <<EOF\nrm x", "here-document 'EOF' is not closed"),
    ],
)
def test_a_here_document_without_a_delimiter_or_an_end_is_refused(line: str, why: str) -> None:
    with pytest.raises(UnparseableCommand, match=f"^cannot read the command: {why}$"):
        lex(line)


@pytest.mark.parametrize(
    ("delimiter", "runs"),
    [("EOF", True), ("'EOF'", False), ('"EOF"', False), ("\\EOF", False)],
)
def test_a_quoted_delimiter_keeps_the_document_unexpanded(delimiter: str, runs: bool) -> None:
    names = [n for n, _ in commands(f"cat <<{delimiter}\n$(rm x)\nEOF")]
    assert ("rm" in names) is runs


@pytest.mark.parametrize("prefix", [" ", "X", "\t ", "\v"])
def test_a_dash_here_document_strips_only_tabs_before_its_delimiter(prefix: str) -> None:
    line = f"cat <<-EOF\n{prefix}EOF\nrm x\n\tEOF\nls"
    assert commands(line) == [("cat", ("<<-", "EOF")), ("ls", ())]


@pytest.mark.parametrize(
    ("line", "expands"),
    [
        ("cat <<E\n$HOME\nb\nE", True),
        ("cat <<E\n`date`\nb\nE", True),
        ("cat <<E\n$HOME `date`\nb\nE", True),
        ("cat <<E\nplain\nb\nE", False),
        ("cat <<'E'\n$HOME\nb\nE", False),
    ],
)
def test_a_here_document_is_quoted_data_that_expands_unless_its_delimiter_is_quoted(
    line: str, expands: bool
) -> None:
    word = lex(line)[2]
    assert isinstance(word, Word)
    assert (word.quoted, word.expands) == (True, expands)
    assert word.heredoc is not None
    assert word.heredoc.split("\n")[1] == "b"


def test_here_documents_on_successive_lines_are_each_read() -> None:
    line = "cat <<A\nrm x\nA\ncat <<B\nrm y\nB\nls"
    assert commands(line) == [("cat", ("<<", "A")), ("cat", ("<<", "B")), ("ls", ())]
