"""A command that names a sensitive file asks first, naming it; the action then carries the
names, so only the run approved on that card sees them (no engine needed)."""

from __future__ import annotations

import shlex

import pytest

from core.governance.flow import ASK_MARK
from core.governance.sensitive import ask_to_read_sensitive, revealing, sensitive_names
from core.tools.action import ToolAction


def nested(command: str, depth: int) -> str:
    """`command` as a command line inside `depth` others (`sh -c '...'`)."""
    for _ in range(depth):
        command = f"sh -c {shlex.quote(command)}"
    return command


@pytest.mark.parametrize(
    ("command", "named"),
    [
        ("diff .env notes/a.txt .env ./.en?", (".env", "./.en?")),  # in order, once each
        ("grep KEY notes/../.env", ("notes/../.env",)),
        ("tool --file=.env --out=a.txt", (".env",)),
        ("make FLAGS=--env-file=.env", (".env",)),  # every value after an '='
        ("env A= B=", ()),
        ("cat .e*", (".e*",)),
        ("cat /workspace/.en?", ("/workspace/.en?",)),
        ("cat ./.*", ("./.*",)),
        ("cat *.pem", ("*.pem",)),  # cert.pem
        ("cat *", ("*",)),  # credentials, id_rsa, ... (not the dotfiles)
        ("cat * .e[n]v", ("*", ".e[n]v")),
        ("cat *.txt notes/*.md", ()),
        ("cat *env", ()),  # `*` skips dotfiles: .env is not among them
        ("cat [.]env", ()),  # nor does a bracket match a leading dot
        ("cat notes", ()),
        ("cat .[e]n?*", (".[e]n?*",)),  # every kind of glob at once
        ("cat 'unbalanced .env", (".env",)),  # unsplittable: split on spaces
        (nested("cat .env", 3), (".env",)),
        # How deep command lines are read is bounded; a file named deeper is still masked in
        # the sandbox (core/tools/sandbox/masks.py), only not asked about by name.
        (nested("cat .env", 4), ()),
    ],
)
def test_the_sensitive_files_a_command_names(command: str, named: tuple[str, ...]) -> None:
    assert sensitive_names(command) == named


@pytest.mark.parametrize(
    "glob",
    [".e*.local", ".n?trc", ".np*", ".py*", ".pg*", ".git-c*", "cred*", "id_r*", "id_e*",
     "server.k*", "cert.p*", ".git/c*", ".s*/id_r*", ".a*/c*", ".e*.production", ".ht*",
     ".s*/id_e*", ".d*/config.json", ".k*/config", ".gn*/private-*"],
)  # fmt: skip
def test_a_glob_that_could_expand_to_any_one_secrets_file_asks(glob: str) -> None:
    assert sensitive_names(f"cat {glob}") == (glob,)


def test_the_owner_is_told_which_files_and_why() -> None:
    assert ask_to_read_sensitive("diff .env ~/.ssh/id_rsa") == (
        f"{ASK_MARK}it reads .env, ~/.ssh/id_rsa, a file that holds keys or credentials; "
        "what it prints would reach the model."
    )
    assert ask_to_read_sensitive("cat notes/a.txt") is None


def test_the_asking_action_keeps_its_parameters_and_adds_the_names() -> None:
    action = ToolAction("shell.exec", "cat .env notes", {"in_workspace": True})
    revealed, ask = revealing(action)
    assert revealed.params == {"in_workspace": True, "reveal": [".env"]}
    assert (revealed.capability, revealed.command) == ("shell.exec", "cat .env notes")
    assert ask == ask_to_read_sensitive("cat .env")
    assert revealed.digest != action.digest  # the names are bound into the approval
    assert action.params == {"in_workspace": True}  # the original is left as it was


def test_an_action_with_no_command_names_nothing() -> None:
    action = ToolAction("file.list", None, {"path": ".env"})
    assert revealing(action) == (action, None)
