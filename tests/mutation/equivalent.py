"""Reads equivalent.txt: the mutants that change no behaviour, each with why.

One mutant a line, `<key> ==> <reason>`, the key as the runner prints it; blank lines and
lines starting with # are ignored.
"""

from __future__ import annotations

from pathlib import Path

FILE = Path(__file__).with_name("equivalent.txt")
ARROW = " ==> "


class BadEntry(ValueError):
    """A line of equivalent.txt that is not `<key> ==> <reason>`."""


def load(path: Path = FILE) -> dict[str, str]:
    """Every listed mutant's key and its reason."""
    listed: dict[str, str] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        key, arrow, reason = line.rpartition(ARROW)
        if not arrow or not key.strip() or not reason.strip():
            raise BadEntry(f"{path.name}:{number}: expected '<mutant> ==> <reason>', got {line!r}")
        listed[key.strip()] = reason.strip()
    return listed
