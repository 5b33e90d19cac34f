"""How a line splits into statements and commands: separators, pipes, reserved words,
redirections, wrappers read through, and the limits past which a line is refused."""

from __future__ import annotations

import shlex

import pytest

from soul import UnparseableCommand
from soul.errors import BeyondReading
from soul.shell import Command, Redirect, Statement, parse_command


def commands(line: str) -> list[tuple[str, tuple[str, ...]]]:
    """Each command the line runs, with its arguments, in reading order."""
    return [(c.name, c.args) for s in parse_command(line) for c in s.commands]


def only(line: str) -> Statement:
    """The one statement of `line`."""
    (statement,) = parse_command(line)
    return statement


def command(line: str, name: str) -> Command:
    """The command called `name` in `line`."""
    (found,) = [c for s in parse_command(line) for c in s.commands if c.name == name]
    return found


@pytest.mark.parametrize(
    ("line", "statements"),
    [
        ("ls; rm x", [("ls",), ("rm", "x")]),
        ("ls & rm x", [("ls",), ("rm", "x")]),
        ("ls && rm x", [("ls",), ("rm", "x")]),
        ("ls || rm x", [("ls",), ("rm", "x")]),
        ("ls\nrm x", [("ls",), ("rm", "x")]),
        ("ls;; rm x", [("ls",), ("rm", "x")]),
        ("ls;& rm x", [("ls",), ("rm", "x")]),
        ("ls;;& rm x", [("ls",), ("rm", "x")]),
        ("ls | rm x", [("ls", "|", "rm", "x")]),
        ("ls;", [("ls",)]),
    ],
)
def test_separators_end_statements_and_pipes_do_not(
    line: str, statements: list[tuple[str, ...]]
) -> None:
    assert [s.tokens for s in parse_command(line)] == statements


@pytest.mark.parametrize(
    ("line", "ran"),
    [
        ("ls | rm x", [("ls", ()), ("rm", ("x",))]),
        ("ls |& rm x", [("ls", ()), ("rm", ("x",))]),
        ("(rm x)", [("rm", ("x",))]),
        ("(ls) rm x", [("ls", ()), ("rm", ("x",))]),
        ("f() rm x", [("f", ()), ("rm", ("x",))]),
        ("ls -l > f | wc -l", [("ls", ("-l", ">", "f")), ("wc", ("-l",))]),
        ("ls 2> f", [("ls", ("2", ">", "f"))]),
        ("ls -l >", [("ls", ("-l", ">"))]),
    ],
)
def test_each_side_of_a_pipe_is_a_command_with_its_own_arguments(
    line: str, ran: list[tuple[str, tuple[str, ...]]]
) -> None:
    assert commands(line) == ran


@pytest.mark.parametrize(
    ("line", "ran", "keywords"),
    [
        ("if rm x; then ls; fi", ["rm", "ls"], ["if", "then", "fi"]),
        ("if ls; then :; elif rm x; then :; else pwd; fi", ["ls", ":", "rm", ":", "pwd"], []),
        ("while rm x; do ls; done", ["rm", "ls"], ["while", "do", "done"]),
        ("until rm x; do ls; done", ["rm", "ls"], ["until", "do", "done"]),
        ("{ rm x; }", ["rm"], ["{", "}"]),
        ("! rm x", ["rm"], ["!"]),
        ("case x in a) rm x;; esac", ["rm"], ["case", "esac"]),
        ("function f { rm x; }", ["rm"], ["function", "{", "}"]),
        ("function f rm x", ["rm"], ["function"]),
    ],
)
def test_reserved_words_are_not_commands(line: str, ran: list[str], keywords: list[str]) -> None:
    statements = parse_command(line)
    assert [c.name for s in statements for c in s.commands] == ran
    found = {k for s in statements for k in s.keywords}
    assert set(keywords) <= found
    assert found <= {"if", "then", "elif", "else", "fi", "while", "until", "do", "done"} | {
        "{", "}", "!", "case", "esac", "function", "for", "select", "in",
    }  # fmt: skip


@pytest.mark.parametrize(
    ("line", "name"), [('"if" x', "if"), ("'for' x", "for"), ("\\{ x", "{"), ('"in" x', "in")]
)
def test_a_quoted_reserved_word_is_a_command(line: str, name: str) -> None:
    assert [c.name for c in only(line).commands] == [name]
    assert only(line).keywords == frozenset()


def test_a_loop_header_sets_its_variable_and_runs_nothing() -> None:
    header = parse_command("for f in a b; do rm $f; done")[0]
    assert (header.commands, header.keywords) == ((), frozenset({"for"}))
    assert [w.text for w in header.assigned] == ["f="]
    assert [w.text for w in parse_command("select f in a; do ls; done")[0].assigned] == ["f="]
    assert only("for").assigned == ()
    assert only("case x in").assigned == ()
    assert only("in x").commands == ()


def test_a_function_keyword_is_a_start_a_deny_pattern_may_name() -> None:
    statement = parse_command("function f { rm x; }")[0]
    assert statement.starts == (0, 3)
    assert [c.name for c in statement.commands] == ["rm"]


def test_assignments_alone_set_variables_and_run_nothing() -> None:
    statement = only("X=1 Y=2")
    assert statement.commands == ()
    assert [w.text for w in statement.assigned] == ["X=1", "Y=2"]
    prefixed = only("X=1 rm x")
    assert prefixed.assigned == ()
    assert [w.text for w in prefixed.commands[0].assignments] == ["X=1"]


@pytest.mark.parametrize(
    "declare",
    [
        *("d=/", "export d=/", "declare d=/", "typeset d=/", "local d=/", "readonly d=/"),
        'export "d=/"',  # the builtin reads its argument after quote removal
        "d=/; export d",  # exporting keeps the value
    ],
)
def test_a_variable_set_earlier_is_spelled_later(declare: str) -> None:
    statement = parse_command(f"{declare}; rm -rf $d")[-1]
    assert "/" in statement.spellings[statement.tokens.index("$d")]


@pytest.mark.parametrize("line", ["export d", "echo d=/", "nice export d=/"])
def test_a_declaration_without_a_value_leaves_the_variable_unknown(line: str) -> None:
    statement = parse_command(f"{line}; rm -rf $d")[-1]
    assert "/" not in statement.spellings[statement.tokens.index("$d")]


@pytest.mark.parametrize(
    ("line", "spelled"),
    [
        ("cd /; rm -rf .", True),
        ("pushd /; rm -rf .", True),
        ("cd / && sh -c 'rm -rf .'", True),  # the nested line keeps the outer reading
        ("nice cd /; rm -rf .", False),  # a wrapped cd runs in a child: no change here
        ("setpriv cd /; rm -rf .", False),
        ("ls /; rm -rf .", False),
    ],
)
def test_a_change_of_directory_is_tracked_only_when_the_shell_makes_it(
    line: str, spelled: bool
) -> None:
    statement = parse_command(line)[-1]
    assert ("/" in statement.spellings[statement.tokens.index(".")]) is spelled


def test_a_command_word_known_only_at_run_time_is_a_dynamic_start() -> None:
    statement = only("$c -rf x")
    assert statement.dynamic == frozenset({0})
    assert statement.commands[0].dynamic
    assert not only("rm x").commands[0].dynamic
    assert only("rm x").dynamic == frozenset()
    assert only("> f").commands == ()


def test_a_dynamic_command_is_not_read_as_a_wrapper() -> None:
    # `$w` may be anything: read as a wrapper it would hide that it is itself a command.
    assert [c.name for c in only("$w nice rm x").commands] == ["$w"]


def test_wrappers_are_read_through_and_only_guessed_ones_stay_commands() -> None:
    assert [(c.name, c.wrappers) for c in only("nice -n 5 rm x").commands] == [("rm", ("nice",))]
    assert [(c.name, c.wrappers, c.guessed) for c in only("setpriv nice rm x").commands] == [
        ("rm", ("setpriv", "nice"), True),
        ("x", ("setpriv",), True),
        ("setpriv", (), False),
    ]
    assert [(c.name, c.wrappers) for c in only("X=1 sudo rm x").commands] == [("rm", ("sudo",))]
    assert [w.text for w in only("X=1 sudo rm x").commands[0].assignments] == ["X=1"]


def test_find_exec_bodies_are_commands_under_find() -> None:
    assert commands("find . -exec rm -f {} ; -print") == [
        ("rm", ("-f", "{}")),
        ("find", (".", "-exec", "rm", "-f", "{}")),
        ("-print", ()),
    ]
    rm = command("sudo find . -exec rm {} +", "rm")
    assert (rm.args, rm.wrappers) == (("{}",), ("sudo", "find"))
    guessed = command("setpriv find . -exec rm {} +", "rm")
    assert (guessed.wrappers, guessed.guessed) == (("setpriv", "find"), True)
    assert command("X=1 find . -exec rm {} +", "rm").assignments == ()


def test_a_shell_reads_what_is_fed_to_it() -> None:
    assert "rm" in [n for n, _ in commands("bash <<< 'rm f'")]
    assert "rm" in [n for n, _ in commands("bash <<EOF\nrm f\nEOF")]
    assert "rm" in [n for n, _ in commands("bash <<-EOF\n\trm f\n\tEOF")]
    assert "rm" in [n for n, _ in commands("echo 'rm f' | sh")]
    assert "rm" in [n for n, _ in commands("echo $'rm\\tf' | sh")]
    assert "rm" in [n for n, _ in commands("cat <<EOF | sh\nrm f\nEOF")]
    assert "rm" in [n for n, _ in commands("cat <<< 'rm f' | sh")]
    assert "rm" in [n for n, _ in commands("echo 'rm f;ls' | sh")]
    assert "rm" in [n for n, _ in commands("python3 -c \"import os; os.system('rm f')\"")]
    assert "rm" not in [n for n, _ in commands("echo 'rm f' | sh -c ls")]  # -c: stdin unread
    assert "rm" not in [n for n, _ in commands("cat <<EOF\nrm f\nEOF")]
    assert "rm" not in [n for n, _ in commands("cat <<< 'rm f'")]
    assert "rm" not in [n for n, _ in commands("echo 'rm f' | cat")]
    assert "rm" not in [n for n, _ in commands("echo 'rm f' | ls; sh")]  # another statement


def test_a_redirect_missing_its_target_is_kept_without_one() -> None:
    """A syntax error to bash, read as far as it goes: `command_reason` refuses the
    target-less redirect, and the pipe's other side is still a command of its own."""
    assert commands("ls -l > | wc -l") == [("ls", ("-l", ">")), ("wc", ("-l",))]
    assert command("ls -l > | wc -l", "ls").redirects == (Redirect(">", "", None),)
    assert command("ls 2>", "ls").redirects == (Redirect(">", "2", None),)
    assert commands("bash <<<") == [("bash", ("<<<",))]
    assert "rm" in [n for n, _ in commands("bash > <<< 'rm f'")]


@pytest.mark.parametrize(
    ("delimiter", "line"),
    [
        ("{a,b}", "{a,b}"),  # not brace-expanded
        ("a${IFS}b", "a${IFS}b"),  # not split
        ("$x", "$x"),  # not expanded
        ("'E O'", "E O"),
        ('"E\\"F"', 'E"F'),
        ('"a\\b"', "a\\b"),  # in double quotes a backslash stays before a plain letter
        ("E\\OF", "EOF"),
    ],
)
def test_a_here_document_ends_at_its_delimiter_as_bash_spells_it(delimiter: str, line: str) -> None:
    assert commands(f"cat <<{delimiter}\nrm x\n{line}\nls") == [("cat", ("<<", line)), ("ls", ())]


def test_a_broken_line_fed_to_a_shell_is_skipped() -> None:
    assert [n for n, _ in commands('echo "it\'s" | sh')] == ["echo", "sh"]


def test_nesting_is_read_four_levels_deep_and_refused_beyond() -> None:
    deepest = "echo $(echo $(echo $(echo $(rm x))))"
    assert [n for n, _ in commands(deepest)][-1] == "rm"
    with pytest.raises(UnparseableCommand, match=r"^commands are nested too deeply to read$"):
        parse_command("echo $(echo $(echo $(echo $(echo $(rm x)))))")


def piped(depth: int, line: str = "rm -rf /") -> str:
    """`line` echoed into a shell, `depth` times over."""
    return line if depth == 0 else f"echo {shlex.quote(piped(depth - 1, line))} | sh"


def test_text_piped_to_a_shell_is_read_four_levels_deep_and_refused_beyond() -> None:
    assert commands(piped(4))[-1] == ("rm", ("-rf", "/"))
    with pytest.raises(BeyondReading, match=r"^commands are nested too deeply to read$"):
        parse_command(piped(5))


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("ls " * 4100, "more than 4096 words"),
        ("ls a b\n" * 1400, "more than 4096 words"),  # lines that each read alone
        ("echo " + "$(" * 40 + "x" + ")" * 40, "substitutions are nested too deeply"),
        ("nice " * 17 + "rm x", "too many wrappers"),
    ],
    ids=["words", "lines", "substitutions", "wrappers"],
)
def test_text_piped_to_a_shell_past_a_limit_is_refused_not_skipped(line: str, why: str) -> None:
    """Text that is no command line is skipped; text too big to read may still run."""
    with pytest.raises(BeyondReading, match=why):
        parse_command(piped(1, line))


def fed_to_sh(*lines: str) -> str:
    """`lines` as a script a shell reads from a here-document."""
    return "cat <<'EOF' | sh\n" + "\n".join(lines) + "\nEOF"


def test_a_script_that_does_not_read_whole_is_read_as_a_shell_runs_it() -> None:
    """bash runs each complete command of a script before it reads the next line: a line
    that never reads (a quote not closed) does not hide the commands before it."""
    assert commands("echo $'rm -rf /\\n\"' | sh")[-1] == ("rm", ("-rf", "/"))
    assert commands(fed_to_sh("rm -rf /", '"'))[-1] == ("rm", ("-rf", "/"))
    # A quote closed on a later line: what follows it is read as well.
    quoted = fed_to_sh('echo "a', 'b"', "rm -rf /", '"')
    assert commands(quoted)[-2:] == [("echo", ("a\nb",)), ("rm", ("-rf", "/"))]


def test_a_line_past_a_limit_in_a_script_that_does_not_read_whole_is_refused() -> None:
    with pytest.raises(BeyondReading, match=r"^commands are nested too deeply to read$"):
        parse_command(fed_to_sh(piped(4), '"'))


def test_a_script_that_does_not_read_for_64_lines_is_refused() -> None:
    """Each try reads the lines held so far again: past 64 a line that may still close the
    quote and run more is refused, not skipped."""
    held = ['echo "a', *(f"line {i}" for i in range(62))]  # a last line never reads: '"'
    assert commands(fed_to_sh(*held, 'b"', "rm -rf /", '"'))[-1] == ("rm", ("-rf", "/"))
    with pytest.raises(BeyondReading, match=r"64 lines fed to a shell do not read$"):
        parse_command(fed_to_sh(*held, "line 62", 'b"', "rm -rf /", '"'))


def test_sixteen_wrappers_are_read_and_seventeen_refused() -> None:
    assert [c.name for c in only("nice " * 16 + "rm x").commands] == ["rm"]
    with pytest.raises(UnparseableCommand, match=r"^cannot read the command: too many wrappers$"):
        parse_command("nice " * 17 + "rm x")


def test_a_broken_character_is_refused_and_any_real_one_read() -> None:
    """A lone surrogate (a model's JSON can carry one) is in no byte string bash could get."""
    for broken in ("rm caf\udce9", "echo ok; rm \ud800x", "echo '\udfff'"):
        with pytest.raises(UnparseableCommand, match=r"a broken character \(a lone surrogate\)$"):
            parse_command(broken)
    assert commands("rm café \U0001f600") == [("rm", ("café", "\U0001f600"))]
