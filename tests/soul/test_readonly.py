"""Which command lines are proven read-only, option by option, and the reason given when a
line is not: the words the owner reads on a card and in the logs."""

from __future__ import annotations

import string

import pytest

from soul import provably_read_only, read_only_reason
from soul.readonly import command_reason
from soul.shell import Command, parse_command


def first_command(line: str) -> Command:
    """The first command `line` runs."""
    return parse_command(line)[0].commands[0]


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("", "there is no command"),
        ("# only a comment", "there is no command"),
        ("X=1", "it sets shell variables"),
        ("for", "for is not proven read-only"),
        ("case", "case is not proven read-only"),
        ("select", "select is not proven read-only"),
        ("in", "in is not proven read-only"),
        ("function f { ls; }", "function is not proven read-only"),
        ("ls $(pwd)", "it runs a substitution"),
        ("ls >", "a redirection has no target"),
        ("ls 2>", "a redirection has no target"),
        ("ls > $(pwd)", "a redirection runs a substitution"),
        ("cat <> notes.txt", "<> notes.txt opens it for writing"),
        ("cat <> /dev/null", "<> /dev/null opens it for writing"),
        ("ls > ~/x", "it writes to ~/x"),
        ("ls > /dev/nul?", "it writes to /dev/nul?"),
        ("ls >& out.txt", "it writes to out.txt"),
        ("ls > /dev/null &", "'&' (a background job, subshell or function) is not proven"),
        ("setpriv ls", "ls may be run by a wrapper this reading does not know"),
        ("PATH=. ls", "ls runs with changed environment variables"),
        ("xargs ls", "ls runs under xargs"),
        ("/bin/l[s]", "the command is only known at run time"),
        ("~/bin/ls", "the command is only known at run time"),
        ("./ls", "./ls is not a system command"),
        ("/usr/local/bin/ls", "/usr/local/bin/ls is not a system command"),
        ("rm x", "rm is not a known read-only command"),
        ("sort *", "a glob may give sort a writing option"),
        # An allowed redirection does not end the reading: the writing option is still seen.
        ("sort -o out a.txt 2>/dev/null", "-o writes, runs a program or sets a variable"),
    ],
)
def test_the_reason_is_the_first_thing_not_proven(line: str, reason: str) -> None:
    assert read_only_reason(line) == reason
    assert provably_read_only(line) is False


@pytest.mark.parametrize(
    "line",
    [
        "ls",
        "ls\npwd",
        "ls && pwd || true",
        "ls |& cat",
        "ls 2>&1",
        "ls 2>&-",
        "ls > /dev/stdout",
        "ls 2> /dev/stderr",
        "cat <&3",
        "cat <<EOF\nx\nEOF",
        "cat <<-EOF\n\tx\n\tEOF",
        "cat *.txt",
        "ls in",
    ],
)
def test_reading_operators_and_sink_redirections_stay_read_only(line: str) -> None:
    assert read_only_reason(line) is None
    assert provably_read_only(line) is True


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("sort -o out a.txt", "-o writes, runs a program or sets a variable"),
        ("sort -ruo out a.txt", "-ruo writes, runs a program or sets a variable"),
        ("sort -T /tmp a.txt", "-T writes, runs a program or sets a variable"),
        ("sort --output=out a.txt", "--output=out writes or runs a program"),
        ("sort --outp=out a.txt", "--outp=out writes or runs a program"),  # GNU abbreviation
        ("sort --o out a.txt", "--o writes or runs a program"),
        ("sort --compress-program=sh a.txt", "--compress-program=sh writes or runs a program"),
        ("sort --temporary-directory /tmp a", "--temporary-directory writes or runs a program"),
        ("tree -o out", "-o writes, runs a program or sets a variable"),
        ("tree -R", "-R writes, runs a program or sets a variable"),
        ("tree --output=out", "--output=out writes or runs a program"),
        ("file -C", "-C writes, runs a program or sets a variable"),
        ("file --compile", "--compile writes or runs a program"),
        ("rg --pre=sh x", "--pre=sh writes or runs a program"),
        ("rg --hostname-bin=sh x", "--hostname-bin=sh writes or runs a program"),
        ("fd --exec=wc", "--exec=wc writes or runs a program"),
        ("fd --exec-batch=wc", "--exec-batch=wc writes or runs a program"),
        ("fd -xwc", "-xwc writes, runs a program or sets a variable"),
        ("fdfind --exec=wc", "--exec=wc writes or runs a program"),
        ("fdfind --exec-batch=wc", "--exec-batch=wc writes or runs a program"),
        ("fdfind -Xwc", "-Xwc writes, runs a program or sets a variable"),
        ("printf -v x hi", "-v writes, runs a program or sets a variable"),
        ("find . -delete", "find -delete writes or runs a program"),
        ("find . -exec ';'", "find -exec writes or runs a program"),
        ("find . -execdir ';'", "find -execdir writes or runs a program"),
        ("find . -ok ';'", "find -ok writes or runs a program"),
        ("find . -okdir ';'", "find -okdir writes or runs a program"),
        ("find . -fls out", "find -fls writes or runs a program"),
        ("find . -fprint out", "find -fprint writes or runs a program"),
        ("find . -fprint0 out", "find -fprint0 writes or runs a program"),
        ("find . -fprintf out %p", "find -fprintf writes or runs a program"),
        ("uniq a.txt out.txt", "uniq with two files writes the second"),
        ("uniq - out.txt", "uniq with two files writes the second"),
        ("uniq -f 1 a.txt out.txt", "uniq with two files writes the second"),
        ("uniq -- -in.txt out.txt", "uniq with two files writes the second"),
        ("date -s 10:00", "-s writes, runs a program or sets a variable"),
        ("date --set=10:00", "--set=10:00 writes or runs a program"),
        ("date 01011200", "date with an operand sets the clock"),
        ("date -u 01011200", "date with an operand sets the clock"),
    ],
)
def test_a_writing_option_is_refused_by_name(line: str, reason: str) -> None:
    assert read_only_reason(line) == reason


@pytest.mark.parametrize(
    "line",
    [
        "sort -- a.txt",
        "sort --reverse a.txt",
        "sort notes.txt",
        "tree -L 2",
        "file a.txt",
        "rg -n TODO",
        "fd -e py",
        "fdfind -e py",
        "printf '%s' x",
        "find . -name '*.py' -print",
        "uniq a.txt",
        "uniq -c a.txt",
        "uniq -f 1 a.txt",
        "uniq -s 2 a.txt",
        "uniq -w 3 a.txt",
        "uniq -- -in.txt",
        "date",
        "date +%F",
        "date -d yesterday +%F",
        "date --date yesterday",
        "date -f dates.txt",
        "date --file dates.txt",
        "date -r a.txt +%s",
        "date --reference a.txt",
    ],
)
def test_the_same_commands_without_a_writing_option_stay_read_only(line: str) -> None:
    assert read_only_reason(line) is None


@pytest.mark.parametrize(
    ("name", "writing", "operand"),
    [
        ("sort", "oT", "a.txt"),
        ("tree", "oR", "x"),
        ("file", "C", "a.txt"),
        ("rg", "", "x"),
        ("fd", "xX", "x"),
        ("fdfind", "xX", "x"),
        ("printf", "v", "x"),
        ("date", "s", "+%s"),
    ],
)
def test_only_the_writing_option_letters_refuse(name: str, writing: str, operand: str) -> None:
    refused = {
        letter
        for letter in string.ascii_letters + string.digits
        if read_only_reason(f"{name} -{letter} {operand}") is not None
    }
    assert refused == set(writing)


def test_without_strict_only_commands_with_writing_options_refuse_expansions() -> None:
    # The Soul's tiers read one command at a time: `cat $f` reads whatever $f names, but
    # `sort $opts` may be given -o.
    assert command_reason(first_command("cat $f")) is None
    assert command_reason(first_command("cat $f"), strict=True) == "$f is only known at run time"
    assert command_reason(first_command("sort $opts a.txt")) == "$opts is only known at run time"
    assert command_reason(first_command("cat $(ls)")) == "cat runs a substitution"
    assert command_reason(first_command("cat a.txt")) is None
