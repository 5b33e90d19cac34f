"""Commands that name a sensitive file: the owner is asked, and only then may it be seen.

The sandbox masks every sensitive file whatever a command does (core/tools/sandbox/masks.py);
a command that names one (`cat .env`, a glob like `.en?`, `--file=.env`) asks first, and its
action carries the names under `reveal`, so the run the owner approved on that card (and
only that run) sees exactly those files.
"""

from __future__ import annotations

import fnmatch
from dataclasses import replace

from core.governance.flow import ASK_MARK, command_words
from core.tools.action import ToolAction
from core.tools.sandbox.masks import REVEAL
from core.tools.workspace import is_sensitive

# What a glob in a command could reach that read_file refuses (the shell expands it).
_SENSITIVE_NAMES = (".env", ".env.local", ".env.production", ".netrc", ".npmrc", ".pypirc",
                    ".pgpass", ".htpasswd", ".git-credentials", "credentials", "id_rsa",
                    "id_ed25519", "server.key", "cert.pem", ".git/config", ".ssh/id_rsa",
                    ".ssh/id_ed25519", ".aws/credentials", ".docker/config.json",
                    ".kube/config", ".gnupg/private-keys-v1.d")  # fmt: skip


def sensitive_names(command: str) -> tuple[str, ...]:
    """The sensitive files a command line names, as it names them (in order, once each)."""
    named = (w for w in _operands(command) if is_sensitive(w) or _globs_sensitive(w))
    return tuple(dict.fromkeys(named))


def ask_to_read_sensitive(command: str) -> str | None:
    """Why a command that names a sensitive file (.env, a key, .git/config) needs the owner:
    read_file refuses such files, and no other path may show them to the model untapped."""
    named = sensitive_names(command)
    if not named:
        return None
    return (
        f"{ASK_MARK}it reads {', '.join(named)}, a file that holds keys or credentials; what "
        "it prints would reach the model."
    )


def revealing(action: ToolAction) -> tuple[ToolAction, str | None]:
    """`action` carrying the sensitive names its command names (bound into its digest, so
    into the approval), and why the owner must decide; unchanged and None if it names none."""
    ask = ask_to_read_sensitive(action.command or "")
    if ask is None:
        return action, None
    named = list(sensitive_names(action.command or ""))
    return replace(action, params={**action.params, REVEAL: named}), ask


def _globs_sensitive(word: str) -> bool:
    """Whether a glob (`.e*`, `.en?`, `*.pem`) may expand to a sensitive file's name."""
    if not any(ch in word for ch in "*?["):
        return False
    pattern = word.removeprefix("/workspace/").removeprefix("./")
    for name in _SENSITIVE_NAMES:
        hidden = name.startswith(".") and not pattern.startswith(".")  # `*` skips dotfiles
        if not hidden and fnmatch.fnmatchcase(name, pattern):
            return True
    return False


def _operands(command: str, depth: int = 0) -> list[str]:
    """A command's arguments; `--file=.env` names .env too (so does `FLAGS=--env-file=.env`:
    every value after an `=`), and a quoted command line (`sh -c 'cat .env'`) names its
    own words."""
    found: list[str] = []
    for word in command_words(command)[1:]:
        found += word.split("=")[1:] or [word]
        if depth < 3 and any(ch.isspace() for ch in word):
            found += _operands(f"_ {word}", depth + 1)
    return found
