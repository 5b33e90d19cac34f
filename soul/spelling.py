"""The other spellings of a shell word: `//`, `/.`, `/workspace/../` and `.` after `cd /` all
name `/`; `${HOME}`, `"$HOME"` and `~` all name the home directory.

The denylist is written with one spelling (`/`, `/[*]`, `~`, `$HOME`); a word matches a deny
pattern when any of its spellings does. The reading follows `cd` and plain variable
assignments made earlier on the same line; what it cannot know (a `cd "$X"`) it leaves unspelled.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from soul.words import Word

WORKSPACE = "/workspace"  # where /run and the agent's commands start (the sandbox's cwd)
HOME = "~"
_PREFIX = re.compile(r"^\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))(.*)$", re.S)


def canonical(path: str, cwd: str | None = None) -> str | None:
    """`path` made absolute (or ~-rooted) and normalised; None when that cannot be known."""
    if not path or "\0" in path:
        return None
    if path == HOME or path.startswith("~/"):
        rest = path[1:]
        if _climbs(rest):
            return None
        normal = posixpath.normpath("/" + rest.lstrip("/"))
        return HOME if normal == "/" else HOME + normal
    if path.startswith("/"):
        return posixpath.normpath("/" + path.lstrip("/"))
    if path.startswith("~") or cwd is None:
        return None
    return canonical(f"{cwd}/{path}")


def _climbs(rest: str) -> bool:
    """Whether a path below home climbs above it (`~/..`)."""
    depth = 0
    for part in rest.split("/"):
        if part == "..":
            depth -= 1
            if depth < 0:
                return True
        elif part not in ("", "."):
            depth += 1
    return False


@dataclass
class Context:
    """What earlier statements of a line established: the working directory and variables."""

    cwd: str | None = WORKSPACE
    variables: dict[str, str] = field(default_factory=lambda: {"HOME": HOME})

    def spell(self, word: Word) -> tuple[str, ...]:
        """Every spelling of `word` a deny pattern may be written in (its text first)."""
        values = [word.text]
        prefix = _PREFIX.match(word.text)  # $NAME, ${NAME}, either followed by more
        if prefix:
            name = prefix.group(1) or prefix.group(2)
            if name in self.variables:
                values.append(self.variables[name] + prefix.group(3))
        forms = dict.fromkeys(values)
        for value in values:
            for form in self._paths(value):
                forms[form] = None
                if form.startswith(HOME):
                    forms["$HOME" + form[1:]] = None
        return tuple(forms)

    def _paths(self, value: str) -> list[str]:
        if value.startswith("-"):
            return []
        found = canonical(value, self.cwd)
        key, eq, rest = value.partition("=")
        if eq and key and "/" not in key:
            right = canonical(rest, self.cwd)
            if right is not None:
                return [f"{key}={right}"] + ([found] if found else [])
        return [found] if found else []

    def value(self, word: Word) -> str | None:
        """The word's value when it is known before the shell runs."""
        if word.param is not None:
            return self.variables.get(word.param)
        return None if word.dynamic else word.text

    def change_directory(self, args: Sequence[Word]) -> None:
        """Follow `cd` (`cd` alone goes home; `cd -` or `cd "$X"` lose track)."""
        operands = [a for a in args if not a.text.startswith("-") or a.text == "-"]
        if not operands:
            self.cwd = HOME
            return
        target = self.value(operands[0])
        self.cwd = None if target is None or target == "-" else canonical(target, self.cwd)

    def assign(self, word: Word) -> None:
        """Remember `NAME=value` (forget NAME when its value is only known at run time)."""
        name, _, value = word.text.partition("=")
        name = name.rstrip("+")
        if word.expands or word.nested or "[" in name:
            self.variables.pop(name, None)
        else:
            self.variables[name] = value
