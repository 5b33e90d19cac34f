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


@pytest.mark.parametrize(
    "line", ["rm \\\n-rf x", "rm \\\n -rf \\\n x", "rm\\\n -rf x", "r\\\nm -rf x"]
)
def test_a_backslash_newline_joins_the_lines(line: str) -> None:
    assert commands(line) == [("rm", ("-rf", "x"))]


@pytest.mark.parametrize("line", ["r\\m -rf x", "\\rm -rf x", "rm -rf \\x"])
def test_an_escaped_character_is_that_character(line: str) -> None:
    assert commands(line) == [("rm", ("-rf", "x"))]


@pytest.mark.parametrize(
    ("line", "ran"),
    [
        ("echo 'rm -rf x'", [("echo", ("rm -rf x",))]),  # one argument, no command
        ('echo "rm -rf x"', [("echo", ("rm -rf x",))]),
        ("r''m x", [("rm", ("x",))]),
        ('r""m x', [("rm", ("x",))]),
    ],
)
def test_quotes_make_one_word_of_what_they_hold(line: str, ran: list[tuple[str, ...]]) -> None:
    assert commands(line) == ran


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("echo 'rm x", "a ' is not closed"),
        ("echo x\\", "a backslash ends the line"),  # refused, not guessed at
    ],
)
def test_a_word_left_open_is_refused_and_named(line: str, why: str) -> None:
    with pytest.raises(UnparseableCommand, match=f"^cannot read the command: {why}$"):
        lex(line)


def test_substitutions_are_read_32_deep_and_refused_beyond() -> None:
    assert lex(nested(32))[0].text == "echo"
    with pytest.raises(BeyondReading, match=r"substitutions are nested too deeply$"):
        lex(nested(33))


@pytest.mark.parametrize(
    ("line", "ran"),
    [
        ("diff <(ls a) f", [("diff", ("<(...)", "f")), ("ls", ("a",))]),
        ("tee >(wc -l) f", [("tee", (">(...)", "f")), ("wc", ("-l",))]),
        ("diff <((rm x)) f", [("diff", ("<(...)", "f")), ("rm", ("x",))]),  # a subshell inside
    ],
)
def test_a_process_substitution_is_a_word_that_runs_its_line(
    line: str, ran: list[tuple[str, ...]]
) -> None:
    assert commands(line) == ran


def test_a_process_substitution_before_a_parameter_makes_the_word_unknown() -> None:
    """`<(ls)$d` is a path under /dev/fd, not the value of $d: cd there loses track."""
    statement = parse_command("d=/tmp; cd <(ls)$d$(pwd); rm -rf .")[-1]
    assert statement.spellings[statement.tokens.index(".")] == (".",)


@pytest.mark.parametrize(
    ("line", "tokens"),
    [
        ("f()", ("f", "()")),
        ("f ( \t)", ("f", "()")),  # a function's empty parentheses, blanks inside or not
        ("f ( )", ("f", "()")),
        ("( w)", ("(", "w", ")")),  # a subshell that runs w
        ("f()(w)", ("f", "()", "(", "w", ")")),  # a function whose body is a subshell
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
        ("cat <<X\n$HOME\nb\nX", True),  # X is no quote
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


@pytest.mark.parametrize(
    ("line", "ran"),
    [
        ("a=(rm -rf x); ls", [("ls", ())]),  # the elements are words, not a command
        ("a+=(rm -rf x); ls", [("ls", ())]),
        ("a=($(rm -rf x))", [("rm", ("-rf", "x"))]),  # a substitution among them runs
        ("a=(<(rm -rf x))", [("rm", ("-rf", "x"))]),
        ("a=(x)y; ls", [("ls", ())]),  # bash assigns the text "(x)y": y is no command
        ("a= rm x", [("rm", ("x",))]),  # an empty value, then the command
    ],
)
def test_an_array_assignment_is_one_word_that_runs_only_its_substitutions(
    line: str, ran: list[tuple[str, ...]]
) -> None:
    assert commands(line) == ran


def test_an_array_assignment_keeps_its_elements_in_its_word() -> None:
    (statement,) = parse_command("a=(rm -rf x)")
    assert statement.tokens == ("a=(rm -rf x)",)


def arrays(depth: int) -> str:
    """An array assignment with `depth` arrays nested inside each other."""
    return "a=(" * depth + "x" + ")" * depth


def test_arrays_in_arrays_are_read_32_deep_and_refused_beyond() -> None:
    assert lex(arrays(32))[0].text == arrays(32)
    with pytest.raises(BeyondReading, match=r"substitutions are nested too deeply$"):
        lex(arrays(33))


@pytest.mark.parametrize(
    ("line", "stream"),
    [
        ("ls 2>f", "2"),
        ("ls 10>f", "10"),
        ("echo ab>f", ""),  # only digits name a stream: ab is an argument
        ("echo '2'>f", ""),  # a quoted digit is an argument: bash writes 2 into f
        ("echo 2''>f", ""),
    ],
)
def test_only_unquoted_digits_before_a_redirect_name_its_stream(line: str, stream: str) -> None:
    (statement,) = parse_command(line)
    (command,) = statement.commands
    (redirect,) = command.redirects
    assert (redirect.fd, redirect.op) == (stream, ">")


def test_a_number_that_ends_the_line_is_a_word() -> None:
    assert commands("sleep 5") == [("sleep", ("5",))]


@pytest.mark.parametrize(
    ("delimiter", "end"),
    [
        ("X", "X"),
        ("EO\\F", "EOF"),  # an escaped last letter is that letter
        ("'E'\"OF\"", "EOF"),  # the quoted parts join
        ("'E'\\OF", "EOF"),
        ('"a\\b"', "a\\b"),  # in double quotes a backslash escapes only $ ` " \
        ('"a\\X"', "a\\X"),
        ('"a\\$b"', "a$b"),
    ],
)
def test_a_here_document_ends_at_its_delimiter_as_bash_spells_it(delimiter: str, end: str) -> None:
    line = f"cat <<{delimiter}\nrm -rf x\n{end}\nls"
    assert commands(line) == [("cat", ("<<", end)), ("ls", ())]


def test_a_line_of_4096_words_is_read_and_one_more_is_refused() -> None:
    assert len(lex("x " * 4096)) == 4096
    with pytest.raises(BeyondReading, match=r"^cannot read the command: it has more than 4096"):
        lex("x " * 4097)
