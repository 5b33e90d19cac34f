"""SafeREPL: ls, cat, grep, find, cp, mv, rm, mkdir, touch, echo, pwd with the standard
library inside the workspace. Never a shell: no pipes, globs, redirects or substitutions.

Every path passes the workspace guard and is then reached through directory descriptors
opened one component at a time without following symlinks, with O_NOFOLLOW on the last one
(Workspace.directory / parent_of, as FileOps does). A writer that swaps a file or folder for
a symlink between the check and the use makes the command fail; it never leads it outside.

This module reads the command line and runs it in a thread; the commands themselves are in
core/tools/repl_reads.py and core/tools/repl_writes.py, their path access in repl_paths.py.
"""

from __future__ import annotations

import asyncio
import re
import shlex
from collections.abc import Callable
from functools import partial

from core.errors import ToolUnavailable
from core.tools.action import ToolAction
from core.tools.base import ToolResult, bounded
from core.tools.capability import CapabilityTokens
from core.tools.oserrors import explain
from core.tools.repl_paths import Failed, Usage
from core.tools.repl_reads import cat, find, grep, ls
from core.tools.repl_writes import cp, mkdir, mv, rm, touch
from core.tools.workspace import MOUNT, Workspace

SHELL_SYNTAX = re.compile(r"[|;&<>`$]")

Command = Callable[[Workspace, list[str]], str]


def _pwd(ws: Workspace, args: list[str]) -> str:
    return str(MOUNT)


def _echo(ws: Workspace, args: list[str]) -> str:
    return " ".join(args)


_RUNS: dict[str, Command] = {
    "ls": ls,
    "cat": cat,
    "grep": grep,
    "find": find,
    "cp": cp,
    "mv": mv,
    "rm": rm,
    "mkdir": mkdir,
    "touch": touch,
    "echo": _echo,
    "pwd": _pwd,
}


class SafeRepl:
    """The CommandRunner for the workspace when no sandbox is in use."""

    name = "safe_repl"
    COMMANDS = ("ls", "cat", "grep", "find", "cp", "mv", "rm", "mkdir", "touch", "echo", "pwd")

    def __init__(self, workspace: Workspace, capabilities: CapabilityTokens) -> None:
        self._capabilities = capabilities
        self._table: dict[str, Callable[[list[str]], str]] = {
            name: partial(_RUNS[name], workspace) for name in self.COMMANDS
        }

    def supports(self, command: str) -> bool:
        """Whether SafeREPL can run this command line at all."""
        try:
            words = shlex.split(command)
        except ValueError:
            return False
        return bool(words) and words[0] in self._table and not SHELL_SYNTAX.search(command)

    async def run(self, action: ToolAction, capability: str | None) -> ToolResult:
        """Run one command line (after checking its capability token) in a thread."""
        self._capabilities.check(capability, action.digest)
        command = action.command or ""
        # Unavailable rather than failed: nothing ran, and the router's reply then names why
        # the sandbox (which runs these) could not.
        if SHELL_SYNTAX.search(command):
            raise ToolUnavailable("pipes, redirects and substitutions need the sandbox")
        words = shlex.split(command)
        if not words or words[0] not in self._table:
            raise ToolUnavailable(f"SafeREPL runs only: {', '.join(self.COMMANDS)}")
        try:
            output = await asyncio.to_thread(self._table[words[0]], words[1:])
            code = 0
        except Usage as exc:
            output, code = f"{words[0]}: {exc}", 2
        except Failed as exc:
            output, code = f"{words[0]}: {exc}", 1
        except OSError as exc:
            output, code = f"{words[0]}: {explain(exc)}", 1
        text, cut = bounded(output)
        return ToolResult(code, text, cut)
