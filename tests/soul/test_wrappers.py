"""Commands that run other commands: which word is the command they run, which command
lines they carry, and what an interpreter's code hands to the shell."""

from __future__ import annotations

import shlex
import string

import pytest

from soul import Soul, denied_by, read_only_reason
from soul.wrappers import Unwrapped, basename, carried, shell_strings, unwrap


def unwrapped(line: str, at: int = 0) -> Unwrapped | None:
    """What the wrapper at word `at` of `line` runs."""
    return unwrap(shlex.split(line), at)


def runs(line: str, at: int = 0) -> str | None:
    """The word the wrapper at word `at` of `line` runs as its command, if any."""
    found = unwrapped(line, at)
    assert found is not None, f"{line!r} holds no wrapper"
    return None if found.command is None else shlex.split(line)[found.command]


@pytest.mark.parametrize(
    "line",
    [
        "timeout 5 rm x",
        "timeout -s KILL 5 rm x",
        "timeout --signal=KILL 5 rm x",
        "timeout --kill-after 1 5 rm x",
        "nice rm x",
        "nice -n 5 rm x",
        "nice -n5 rm x",
        "nice --adjustment 5 rm x",
        "stdbuf -i 0 rm x",
        "stdbuf --error L rm x",
        "command rm x",
        "command -p rm x",
        "ionice -c 3 rm x",
        "ionice -c3 rm x",
        "ionice --uid 0 rm x",
        "exec -a name rm x",
        "time -f %e rm x",
        "time --output out rm x",
        "time X=1 rm x",  # bash's time: assignments may stand before the command
        "env -u X rm x",
        "env --chdir d rm x",
        "env X=1 Y=2 rm x",
        "env -i X=1 rm x",
        "env -- X=1 rm x",  # GNU env reads assignments after -- too
        "env -u X -- Y=1 rm x",
        "xargs -a list rm",
        "xargs --max-chars 100 rm",
        "xargs --process-slot-var V rm",
        "sudo rm x",
        "sudo -u root rm x",
        "sudo -uroot rm x",
        "sudo -Hu root rm x",  # a cluster whose last letter takes the next word
        "sudo --user=root rm x",
        "sudo --prompt p rm x",
        "sudo --chroot /srv rm x",
        "sudo X=1 rm x",
        "sudo -u root -- rm x",
        "doas -u root rm x",
        "doas -C conf rm x",
        "chrt 0 rm x",
        "chrt -T 5 0 rm x",
        "chrt --sched-deadline 5 0 rm x",
        "taskset 1 rm x",
        "flock lk rm x",
        "flock -w 5 lk rm x",
        "flock --conflict-exit-code 3 lk rm x",
        "runuser -u me rm x",
        "runuser --whitelist-environment X rm x",
        "chroot /srv rm x",
        "gosu me rm x",
        "su-exec me rm x",
        "fakeroot -l lib rm x",
        "fakeroot --faked f rm x",
        "proxychains -f conf rm x",
        "proxychains4 -f conf rm x",
        "strace -o out rm x",
        "strace --string-limit 5 rm x",
        "ltrace -o out rm x",
        "ltrace --output out rm x",
        *(
            f"{name} rm x"
            for name in [
                "nohup",
                "setsid",
                "chronic",
                "unbuffer",
                "builtin",
                "busybox",
                "toybox",
                "catchsegv",
                "eatmydata",
                "nocache",
                "torsocks",
                "dbus-run-session",
            ]
        ),
        "/usr/bin/nice -n 5 rm x",
    ],
)
def test_an_options_value_is_never_taken_for_the_command(line: str) -> None:
    assert runs(line) == "rm"


def test_a_wrapper_further_along_the_line_is_read_from_its_own_word() -> None:
    assert runs("X=1 nice -n 5 rm x", at=1) == "rm"
    assert runs("nice sudo -u root rm x", at=1) == "rm"
    assert runs("nice env -- Y=1 rm x", at=1) == "rm"


@pytest.mark.parametrize(
    "line",
    [
        "command -v rm",
        "command -V rm",
        "command -pv rm",
        "timeout 5",
        "timeout -s KILL",
        "sudo -u root",
        "env --",
        "env -i",
        "env X=1",
        "sudo -- -u root",  # after --, -u is the command's name, not sudo's option
        "script typescript",
        "script -q out.log",
        "su root",
        "su -s /bin/sh root",
    ],
)
def test_nothing_runs_when_no_command_follows(line: str) -> None:
    assert runs(line) is None


@pytest.mark.parametrize(
    ("line", "lines"),
    [
        ("env -S 'rm -f'", ("rm -f",)),
        ("env -S 'rm -f' f", ("rm -f f",)),
        ("env -S 'rm -f' a b", ("rm -f a b",)),
        ("env -Srm f", ("rm f",)),
        ("env --split-string='rm -f' 'a b'", ("rm -f 'a b'",)),
        ("env --split-string 'rm -f' f", ("rm -f f",)),
        ("env -u X -S 'rm -f'", ("rm -f",)),
        ("flock lk -c 'rm x'", ("rm x",)),
        ("flock -c 'rm x' lk", ("rm x",)),
        ("flock -w 5 lk --command 'rm x'", ("rm x",)),
        ("flock --command='rm x' lk", ("rm x",)),
        ("flock --command 'rm x' lk", ("rm x",)),
        ("flock lk -c", ()),
        ("script -qc 'rm x' /dev/null", ("rm x",)),
        ("script -c 'rm x'", ("rm x",)),
        ("script -O log -c 'rm x'", ("rm x",)),
        ("script --output-limit 5 -c 'rm x'", ("rm x",)),
        ("script --command 'rm x'", ("rm x",)),
        ("script -c", ()),
        ("script --command", ()),
        ("su -c 'rm x' root", ("rm x",)),
        ("su --command='rm x'", ("rm x",)),
        ("su --supp-group g -c 'rm x'", ("rm x",)),
        ("runuser -u me -c 'rm x'", ("rm x",)),
        ("runuser -u me --command 'rm x'", ("rm x",)),
        ("watch rm x", ("rm x",)),
        ("watch 'rm x'", ("rm x",)),
        ("watch -n 1 rm x", ("rm x",)),
        ("watch --equexit 5 rm x", ("rm x",)),
        ("watch -n 1", ()),
    ],
)
def test_command_lines_carried_by_options_are_read(line: str, lines: tuple[str, ...]) -> None:
    found = unwrapped(line)
    assert found is not None
    assert found.lines == lines
    assert found.command is None


@pytest.mark.parametrize(
    ("line", "lines"),
    [
        ("sh -c 'rm x'", ("rm x",)),
        ("rbash -c 'rm x'", ("rm x",)),
        ("/bin/bash -c 'rm x'", ("rm x",)),
        ("bash -xc 'rm x' name", ("rm x",)),
        ("bash -c -- 'rm x'", ("rm x",)),
        ("bash -c - 'rm x'", ("rm x",)),
        ("bash -o errexit -c 'rm x'", ("rm x",)),
        ("bash +o posix -c 'rm x'", ("rm x",)),
        ("bash -O extglob -c 'rm x'", ("rm x",)),
        ("bash +O extglob -c 'rm x'", ("rm x",)),
        ("bash --rcfile rc -c 'rm x'", ("rm x",)),
        ("bash --init-file rc -c 'rm x'", ("rm x",)),
        ("bash --norc -c 'rm x'", ("rm x",)),
        ("sh -c 'XDG_CONFIG_HOME=/tmp rm -rf x'", ("XDG_CONFIG_HOME=/tmp rm -rf x",)),
        ("bash -c +", ("+",)),  # a lone + is the command line, not an option
        ("bash -c", ()),
        ("bash script.sh", ()),
        ("bash --norc script.sh", ()),  # a long option holding a c is not -c
        ("bash +c script.sh", ()),
        ("bash -x script.sh -c 'rm x'", ()),  # the script's own arguments
        ("bash -- -c 'rm x'", ()),
    ],
)
def test_a_shell_runs_its_first_operand_only_with_c(line: str, lines: tuple[str, ...]) -> None:
    assert unwrapped(line) == Unwrapped(None, lines)


def test_a_wrapper_whose_options_are_unknown_makes_every_operand_a_guess() -> None:
    words = ["setpriv", "--reuid", "0", "rm", "-rf", "x"]
    assert unwrap(words, 0) == Unwrapped(None, (), (2, 3, 5))
    assert unwrap(["nice", *words], 1) == Unwrapped(None, (), (3, 4, 6))
    assert unwrapped("nsenter -t 1 sh -c 'rm x; ls'") == Unwrapped(None, ("rm x; ls",), (2, 3, 5))
    carrying = "firejail sh -c 'rm x|ls' 'a&b' 'a\tb' 'a\nb' Xvfb"
    found = unwrapped(carrying)
    assert found is not None
    assert found.lines == ("rm x|ls", "a&b", "a\tb", "a\nb")


def test_a_command_that_is_no_wrapper_unwraps_to_nothing() -> None:
    assert unwrap(["ls", "-l"], 0) is None
    assert unwrap(["/usr/bin/rm", "x"], 0) is None


@pytest.mark.parametrize(
    ("name", "words", "lines", "bodies"),
    [
        ("eval", ["rm", "-f", "x"], ["rm -f x"], []),
        ("eval", [], [], []),
        ("trap", ["rm f", "EXIT"], ["rm f"], []),
        ("trap", ["--", "rm f", "EXIT"], ["rm f"], []),
        ("trap", ["-p"], [], []),
        ("find", [".", "-exec", "rm", "{}", ";"], [], [(2, 4)]),
        ("find", [".", "-execdir", "rm", "{}", "+"], [], [(2, 4)]),
        ("find", [".", "-ok", "rm", ";", "-okdir", "ls", "+"], [], [(2, 3), (5, 6)]),
        ("find", [".", "-exec", ";", "-name", "x"], [], []),
        ("find", [".", "-exec", "rm"], [], [(2, 3)]),
        ("find", ["-exec", "rm", "x"], [], [(1, 3)]),
        ("find", [".", "-name", "-exec"], [], []),
        ("fd", ["-x", "rm"], [], [(1, 2)]),
        ("fd", ["-e", "py", "--exec", "rm", ";", "-X", "ls"], [], [(3, 4), (6, 7)]),
        ("fdfind", ["--exec-batch", "rm"], [], [(1, 2)]),
        ("git", ["-c", "alias.x=!rm x", "x"], ["rm x"], []),
        ("git", ["-calias.x=!rm x", "x"], ["rm x"], []),
        ("git", ["-ccore.pager=rm f", "log"], ["rm f"], []),
        ("git", ["-c", "core.pager=less", "log"], ["less"], []),
        ("git", ["-c", "user.name=Ada", "log"], [], []),
        ("git", ["-c", "color.ui", "log"], [], []),
        ("git", ["log", "-c"], [], []),
        ("git", ["log", "-p", "-c", "alias.x=!rm x"], ["rm x"], []),
        ("ls", ["-exec", "rm"], [], []),
        ("grep", ["-c", "core.pager=less", "a.txt"], [], []),
    ],
)
def test_command_lines_carried_by_a_commands_arguments(
    name: str, words: list[str], lines: list[str], bodies: list[tuple[int, int]]
) -> None:
    assert carried(name, words) == (lines, bodies)


@pytest.mark.parametrize(
    "key",
    [
        "core.pager",
        "core.editor",
        "core.fsmonitor",
        "core.sshCommand",
        "core.askpass",
        "core.hooksPath",
        "pager.log",
        "sequence.editor",
        "diff.external",
        "diff.pdf.textconv",
        "diff.pdf.command",
        "filter.lfs.clean",
        "merge.ours.driver",
        "gpg.program",
        "gpg.ssh.program",
        "credential.helper",
        "credential.https://example.org.helper",
        "remote.origin.uploadpack",
        "remote.origin.receivepack",
        "uploadpack.packObjectsHook",
    ],
)
def test_git_settings_whose_value_is_a_program_are_read_as_command_lines(key: str) -> None:
    assert carried("git", ["-c", f"{key}=rm -f f", "status"]) == (["rm -f f"], [])


@pytest.mark.parametrize("key", ["user.name", "core.autocrlf", "color.ui", "core.pagers"])
def test_other_git_settings_carry_no_command(key: str) -> None:
    assert carried("git", ["-c", f"{key}=rm -f f", "status"]) == ([], [])


@pytest.mark.parametrize(
    ("name", "code", "found"),
    [
        ("python3", "import os; os.system('rm -rf x')", ["rm -rf x"]),
        ("python", 'subprocess.run("rm x", shell=True)', ["rm x"]),
        ("python3.11", "subprocess.check_output('rm x', shell=True)", ["rm x"]),
        ("perl", 'system("rm x")', ["rm x"]),
        ("perl5.36", "`rm x`", ["rm x"]),
        ("perl", "qx{rm x}", ["rm x"]),
        ("perl", "qx(rm x)", ["rm x"]),
        ("ruby", "`rm x`; exec('ls')", ["ls", "rm x"]),
        ("ruby3.2", "system('rm x')", ["rm x"]),
        ("php", "shell_exec('rm x');", ["rm x"]),
        ("php8.2", "passthru('rm x');", ["rm x"]),
        ("node", "require('child_process').execSync('rm x')", ["rm x"]),
        ("awk", 'BEGIN { system("rm x") }', ["rm x"]),
        ("gawk", 'BEGIN { system("rm x") }', ["rm x"]),
        ("Rscript", 'system("rm x")', ["rm x"]),
        ("tclsh", 'system("rm x")', ["rm x"]),
        ("lua", "os.execute('rm x'); io.popen('ls')", ["rm x", "ls"]),
        ("python3", "print('hello')", []),
        ("echo", "os.system('rm x')", []),
        ("grep", "`rm x`", []),
    ],
)
def test_an_interpreters_code_is_read_for_shell_calls(
    name: str, code: str, found: list[str]
) -> None:
    assert shell_strings(name, ["-c", code]) == found


def test_an_interpreters_code_spread_over_words_is_joined_by_newlines() -> None:
    # perl joins its -e lines with newlines: a call may span them.
    assert shell_strings("perl", ["-e", 'system("rm -rf', "-e", 'x")']) == ["rm -rf\n-e\nx"]


@pytest.mark.parametrize(
    "name", [*string.ascii_letters, *string.digits, "rm", "python3.11", "su-exec", "_x", ".x"]
)
def test_basename_keeps_the_last_path_part(name: str) -> None:
    assert basename(name) == name
    assert basename(f"/usr/local/bin/{name}") == name
    assert basename(f"bin/{name}/") == name


def test_basename_of_the_root_is_the_root() -> None:
    assert basename("/") == "/"
    assert basename("//") == "//"


@pytest.mark.parametrize(
    "line",
    ["env -- X=1 rm -rf /", "env -u X -- Y=1 rm -rf /", "time X=1 rm -rf /", "sudo X=1 rm -rf /"],
)
def test_an_assignment_before_the_wrapped_command_does_not_hide_it(v1: Soul, line: str) -> None:
    assert denied_by(v1, line) is not None


@pytest.mark.parametrize(
    "line",
    [
        "script -O -c typescript",  # -O takes the next word, even one that looks like -c
        "script --output-limit -c typescript",
        "su -s -c root",
        "su --supp-group -c root",
    ],
)
def test_an_options_value_that_looks_like_c_is_no_command_line(line: str) -> None:
    assert unwrapped(line) == Unwrapped(None, ())


@pytest.mark.parametrize("line", ["nice X=1 rm x", "nohup X=1 rm x", "timeout 5 X=1 rm x"])
def test_wrappers_that_exec_their_operand_run_an_assignment_as_a_program(line: str) -> None:
    assert runs(line) == "X=1"


def test_options_after_envs_assignments_are_still_stepped_over() -> None:
    # GNU env stops reading options at X=1; reading on finds rm, more than it runs, never less.
    assert runs("env X=1 -u Y rm x") == "rm"
    assert runs("sudo X=1 -u root rm x") == "rm"


def test_after_double_dash_no_option_is_read() -> None:
    # sudo runs a command named -u, which does not exist: rm is only its argument.
    assert runs("sudo -- -u root rm x") is None
    assert runs("nice -- -n 5 rm x") is None


def test_a_guessed_wrapper_guesses_from_its_first_operand() -> None:
    assert unwrapped("firejail rm -f x") == Unwrapped(None, (), (1, 3))
    assert unwrapped("nsenter 'rm x'") == Unwrapped(None, ("rm x",), (1,))


@pytest.mark.parametrize("line", ["timeout 5 ls", "nice ls", "stdbuf -o0 ls", "command ls"])
def test_a_harmless_wrapper_keeps_a_read_only_command_read_only(line: str) -> None:
    assert read_only_reason(line) is None


@pytest.mark.parametrize("wrapper", ["ionice", "nohup", "env", "sudo", "time", "exec"])
def test_any_other_wrapper_is_not_proven_read_only(wrapper: str) -> None:
    assert read_only_reason(f"{wrapper} ls") == f"ls runs under {wrapper}"
