"""How a word's characters become the words bash runs: braces spelled out (and bounded),
$IFS splits, $'...' escapes decoded, and what each word is flagged as (glob, ~, NAME=)."""

from __future__ import annotations

import pytest

from soul.lexer import lex
from soul.shell import parse_command
from soul.words import MAX_BRACES, MAX_WORDS, REDIRECTS, Word, decode_ansi_c


def words(line: str) -> list[str]:
    """The text of each word `line` lexes to."""
    return [t.text for t in lex(line) if isinstance(t, Word)]


def only_word(line: str) -> Word:
    """The one word `line` lexes to."""
    (token,) = lex(line)
    assert isinstance(token, Word)
    return token


# Each case checked against bash 5: `printf '[%s]' <words>`.
@pytest.mark.parametrize(
    ("line", "spelled"),
    [
        ("echo {a,b}c", ["echo", "ac", "bc"]),  # the text after the braces follows each word
        ("echo {x}{a,b}", ["echo", "{x}a", "{x}b"]),  # a brace without a comma stays
        ("echo a{b{c,d}", ["echo", "a{bc", "a{bd"]),  # an unclosed brace stays
        ("echo {'a',b}", ["echo", "a", "b"]),  # quoted text inside expands with the rest
        ("echo {a','b}", ["echo", "{a,b}"]),  # a quoted comma separates nothing
        ("echo {a,'}'}", ["echo", "a", "}"]),  # a quoted brace closes nothing
        (
            "echo {a-file-name-longer-than-thirty-two-characters,b}",
            ["echo", "a-file-name-longer-than-thirty-two-characters", "b"],
        ),
    ],
)
def test_braces_are_spelled_out_as_bash_spells_them(line: str, spelled: list[str]) -> None:
    assert words(line) == spelled


def test_an_empty_quoted_word_is_still_a_word() -> None:
    assert words("rm '' \"\" $'' x") == ["rm", "", "", "", "x"]


def test_a_word_from_a_brace_expansion_is_flagged_as_one() -> None:
    assert [t.globs for t in lex("echo {a,b}") if isinstance(t, Word)] == [False, True, True]


def test_a_brace_expansion_is_spelled_out_up_to_its_bounds() -> None:
    assert (MAX_WORDS, MAX_BRACES) == (256, 32)
    many = lex("echo " + "{a,b}" * 9)  # 512 words: the first 256 are spelled, each a glob
    assert len(many) == 1 + 256
    assert all(isinstance(t, Word) and t.globs and len(t.text) == 9 for t in many[1:])
    assert len(lex("echo " + "{a,b}" * 32)) == 1 + 256
    beyond = lex("echo " + "{a,b}" * 33)  # too many braces: left as written, a glob
    assert [t.text for t in beyond] == ["echo", "{a,b}" * 33]
    assert isinstance(beyond[1], Word)
    assert beyond[1].globs


def test_a_word_split_by_ifs_is_known_only_at_run_time() -> None:
    word = only_word("rm${IFS}")  # one piece left, but IFS may hold anything by then
    assert (word.text, word.expands) == ("rm", True)
    (statement,) = parse_command("rm${IFS}")
    assert statement.commands[0].dynamic


@pytest.mark.parametrize(
    ("line", "tilde"),
    [("~/x", True), ("~", True), ("'~'/x", False), ("a~", False), ("\\~", False)],
)
def test_only_an_unquoted_leading_tilde_is_a_home(line: str, tilde: bool) -> None:
    word = only_word(line)
    assert word.tilde is tilde


@pytest.mark.parametrize(
    ("line", "assignment"),
    [
        ("A=1", True),
        ("A+=1", True),
        ("a_1[2]=x", True),
        ("A[i+1]+=x", True),
        ("1A=x", False),
        ("'A'=1", False),
        ("A'+'=1", False),
        ("-A=1", False),
    ],
)
def test_an_assignment_is_an_unquoted_name_and_equals(line: str, assignment: bool) -> None:
    word = only_word(line)
    assert word.assignment is assignment


@pytest.mark.parametrize("op", sorted(REDIRECTS - {"<<", "<<-"}))
def test_each_redirect_takes_the_next_word_as_its_target(op: str) -> None:
    ((command,),) = [s.commands for s in parse_command(f"cat {op} f")]
    ((redirect_op, target),) = [(r.op, r.target and r.target.text) for r in command.redirects]
    assert (redirect_op, target, command.operands) == (op, "f", ())


@pytest.mark.parametrize("delimiter", ["~x*", "A=1", "{a,b}"])
def test_a_here_document_delimiter_is_taken_literally(delimiter: str) -> None:
    word = lex(f"cat <<{delimiter}\nrm x\n{delimiter}")[2]
    assert isinstance(word, Word)
    assert (word.text, word.heredoc) == (delimiter, "rm x")
    assert (word.globs, word.tilde, word.assignment) == (False, False, False)


# Each value checked against bash 5's $'...'.
@pytest.mark.parametrize(
    ("body", "value"),
    [
        (r"\a\b\e\E\f\n\r\t\v", "\a\b\x1b\x1b\f\n\r\t\v"),
        (r"\\\'\"\?", "\\'\"?"),
        (r"\162m", "rm"),
        (r"\x72m", "rm"),
        (r"\u0072m", "rm"),
        (r"\U0010FFFF", "\U0010ffff"),
        (r"\cA\ca", "\x01\x01"),
        (r"x\c", "x\\c"),  # a \c with nothing after it stays as written
        (r"\X\q", "\\X\\q"),  # an unknown escape stays as written
    ],
)
def test_ansi_c_quoting_decodes_as_bash_does(body: str, value: str) -> None:
    assert decode_ansi_c(body) == value


def test_a_code_point_beyond_unicode_is_kept_as_written() -> None:
    assert decode_ansi_c(r"\U00110000") == "\\U00110000"


def test_an_ansi_c_quoted_command_is_the_command_it_spells() -> None:
    assert [c.name for s in parse_command("$'\\162\\x6d' -f f") for c in s.commands] == ["rm"]
