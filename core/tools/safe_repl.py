"""SafeREPL: ls, cat, grep, find, cp, mv, rm, mkdir, touch, echo, pwd with the standard
library inside the workspace. Never a shell: no pipes, globs, redirects or substitutions."""

from __future__ import annotations

import asyncio
import fnmatch
import re
import shlex
import shutil
from collections.abc import Callable
from pathlib import Path

from core.errors import ToolUnavailable
from core.tools.action import ToolAction
from core.tools.base import ToolResult, bounded
from core.tools.capability import CapabilityTokens
from core.tools.workspace import Workspace

SHELL_SYNTAX = re.compile(r"[|;&<>`$]")
MAX_READ = 1 << 20
MAX_LINES = 2000


class Usage(Exception):
    """A command used wrongly; the message is shown to the owner."""


class SafeRepl:
    """The CommandRunner for the workspace when no sandbox is in use."""

    name = "safe_repl"
    COMMANDS = ("ls", "cat", "grep", "find", "cp", "mv", "rm", "mkdir", "touch", "echo", "pwd")

    def __init__(self, workspace: Workspace, capabilities: CapabilityTokens) -> None:
        self._ws = workspace
        self._capabilities = capabilities
        self._table: dict[str, Callable[[list[str]], str]] = {
            name: getattr(self, f"_{name}") for name in self.COMMANDS
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
        except FileNotFoundError as exc:
            output, code = f"{words[0]}: {self._name(exc.filename)}: no such file or directory", 1
        except OSError as exc:
            output, code = f"{words[0]}: {exc.strerror or exc}", 1
        text, cut = bounded(output)
        return ToolResult(code, text, cut)

    def _name(self, filename: object) -> str:
        try:
            return self._ws.display(Path(str(filename)))
        except ValueError:
            return "?"

    @staticmethod
    def _split(args: list[str], allowed: str) -> tuple[set[str], list[str]]:
        flags: set[str] = set()
        rest: list[str] = []
        for arg in args:
            if arg.startswith("-") and len(arg) > 1 and not rest:
                for letter in arg[1:]:
                    if letter not in allowed:
                        raise Usage(f"unsupported option -{letter}")
                    flags.add(letter)
            else:
                rest.append(arg)
        return flags, rest

    def _pwd(self, args: list[str]) -> str:
        return "/workspace"

    def _echo(self, args: list[str]) -> str:
        return " ".join(args)

    def _ls(self, args: list[str]) -> str:
        flags, paths = self._split(args, "la1")
        lines: list[str] = []
        for name in paths or ["/workspace"]:
            path = self._ws.resolve(name)
            entries = sorted(path.iterdir()) if path.is_dir() else [path]
            for entry in entries:
                if entry.name.startswith(".") and "a" not in flags:
                    continue
                lines.append(self._ls_line(entry, "l" in flags))
        return "\n".join(lines)

    @staticmethod
    def _ls_line(entry: Path, long: bool) -> str:
        suffix = "/" if entry.is_dir() else ""
        if not long:
            return entry.name + suffix
        size = entry.lstat().st_size
        return f"{'d' if entry.is_dir() else '-'} {size:>10} {entry.name}{suffix}"

    def _cat(self, args: list[str]) -> str:
        if not args:
            raise Usage("which file?")
        parts = []
        for name in args:
            with self._ws.resolve(name).open("rb") as handle:
                parts.append(handle.read(MAX_READ).decode("utf-8", errors="replace"))
        return "".join(parts)

    def _grep(self, args: list[str]) -> str:
        flags, rest = self._split(args, "inrl")
        if not rest:
            raise Usage("grep [-i] [-n] [-r] [-l] PATTERN [PATH...]")
        try:
            pattern = re.compile(rest[0], re.IGNORECASE if "i" in flags else 0)
        except re.error as exc:
            raise Usage(f"bad pattern: {exc}") from None
        hits: list[str] = []
        for name in rest[1:] or ["/workspace"]:
            for file in self._files(self._ws.resolve(name), recursive="r" in flags or not rest[1:]):
                hits += self._grep_file(file, pattern, flags)
                if len(hits) >= MAX_LINES:
                    return "\n".join(hits[:MAX_LINES])
        return "\n".join(hits)

    def _grep_file(self, file: Path, pattern: re.Pattern[str], flags: set[str]) -> list[str]:
        shown = self._ws.display(file)
        text = file.read_bytes()[:MAX_READ].decode("utf-8", errors="replace")
        found = [(n, line) for n, line in enumerate(text.splitlines(), 1) if pattern.search(line)]
        if "l" in flags:
            return [shown] if found else []
        return [f"{shown}:{n}:{line}" if "n" in flags else f"{shown}:{line}" for n, line in found]

    def _files(self, path: Path, *, recursive: bool) -> list[Path]:
        if path.is_file():
            return [path]
        if not recursive:
            return []
        return sorted(p for p in path.rglob("*") if p.is_file() and not p.is_symlink())

    def _find(self, args: list[str]) -> str:
        start, pattern = "/workspace", "*"
        if args and not args[0].startswith("-"):
            start, args = args[0], args[1:]
        if args[:1] == ["-name"] and len(args) == 2:
            pattern = args[1]
        elif args:
            raise Usage("find [PATH] [-name PATTERN]")
        root = self._ws.resolve(start)
        found = [
            self._ws.display(p) for p in sorted(root.rglob("*")) if fnmatch.fnmatch(p.name, pattern)
        ]
        return "\n".join(found[:MAX_LINES])

    def _cp(self, args: list[str]) -> str:
        flags, rest = self._split(args, "r")
        if len(rest) != 2:
            raise Usage("cp [-r] SOURCE TARGET")
        source, target = self._ws.resolve(rest[0]), self._ws.resolve(rest[1])
        if target.is_dir():
            target = target / source.name
        if source.is_dir():
            if "r" not in flags:
                raise Usage(f"{rest[0]} is a directory (use -r)")
            shutil.copytree(source, target, symlinks=True)
        else:
            shutil.copy2(source, target)
        return ""

    def _mv(self, args: list[str]) -> str:
        if len(args) != 2:
            raise Usage("mv SOURCE TARGET")
        source, target = self._ws.resolve(args[0]), self._ws.resolve(args[1])
        if target.is_dir():
            target = target / source.name
        shutil.move(source, target)
        return ""

    def _rm(self, args: list[str]) -> str:
        flags, rest = self._split(args, "rfRv")
        if not rest:
            raise Usage("rm [-r] [-f] PATH...")
        for name in rest:
            path = self._ws.resolve(name)
            if path == self._ws.root:
                raise Usage("refusing to remove the workspace itself")
            if path.is_dir() and not path.is_symlink():
                if not flags & {"r", "R"}:
                    raise Usage(f"{name} is a directory (use -r)")
                shutil.rmtree(path)
            elif path.exists() or path.is_symlink():
                path.unlink()
            elif "f" not in flags:
                raise FileNotFoundError(2, "No such file", str(path))
        return ""

    def _mkdir(self, args: list[str]) -> str:
        flags, rest = self._split(args, "p")
        for name in rest:
            self._ws.resolve(name).mkdir(parents="p" in flags, exist_ok="p" in flags)
        return ""

    def _touch(self, args: list[str]) -> str:
        for name in args:
            self._ws.resolve(name).touch()
        return ""
