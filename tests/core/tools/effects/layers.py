"""A workspace, a dry run's upper layer and the undo store laid out by hand on the host: the
staging and the commit of an apply tested exactly, with no sandbox."""

from __future__ import annotations

import hashlib
from pathlib import Path

from core.tools.effects.files import DirHandles
from core.tools.effects.model import Effect, FileState
from core.tools.effects.objects import ObjectStore
from core.tools.effects.sources import UpperSource
from core.tools.effects.stage import Plan, check, prepare


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def write(root: Path, files: dict[str, str]) -> None:
    """Files under `root` (a name ending in "/" is a folder)."""
    for name, text in files.items():
        path = root / name
        if name.endswith("/"):
            path.mkdir(parents=True, exist_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)


def state(root: Path, path: str) -> FileState:
    """What `path` is under `root`, a folder with the names it holds (as a dry run sees it)."""
    with DirHandles(root) as handles:
        return handles.state(path, listing=True)


class Layers:
    """A workspace, a dry run's upper layer and the undo store, side by side."""

    def __init__(self, root: Path) -> None:
        self.workspace, self.upper = root / "workspace", root / "upper"
        self.workspace.mkdir()
        self.upper.mkdir()
        self.store = ObjectStore(root / "objects")

    def effects(self, *paths: str) -> tuple[Effect, ...]:
        """The effects on `paths`, from the workspace to the upper layer, in path order."""
        return tuple(
            Effect(p, state(self.workspace, p), state(self.upper, p)) for p in sorted(paths)
        )

    def prepare(self, effects: tuple[Effect, ...], **resume: bool) -> Plan:
        with UpperSource(self.upper) as source:
            return prepare(self.workspace, effects, source, self.store, **resume)

    def check(self, effects: tuple[Effect, ...], **resume: bool) -> tuple[set[str], list[str]]:
        with DirHandles(self.workspace) as handles:
            return check(handles, effects, **resume)
