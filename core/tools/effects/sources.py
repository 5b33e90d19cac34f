"""Where an apply takes new file contents from: a dry run's upper layer, or the undo store."""

from __future__ import annotations

import os
from pathlib import Path
from types import TracebackType

from core.tools.effects.files import FILE_FLAGS, DirHandles
from core.tools.effects.model import Effect
from core.tools.effects.objects import ObjectStore


class UpperSource:
    """Files from an upper layer (no container holds it any more, so it no longer changes).
    `linkable`: the staged file may be a hard link to it, sparing a copy."""

    linkable = True

    def __init__(self, upper: Path) -> None:
        self._dirs = DirHandles(upper)

    def __enter__(self) -> UpperSource:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._dirs.close()

    def open(self, effect: Effect) -> int:
        """A read-only fd on the upper layer's copy of the effect's path."""
        parent, _, name = effect.path.rpartition("/")
        return os.open(name, FILE_FLAGS, dir_fd=self._dirs.get(parent))


class ObjectSource:
    """Files from the undo store. Never linked: an object may back several changes, and a
    workspace file sharing its inode could rewrite it."""

    linkable = False

    def __init__(self, store: ObjectStore) -> None:
        self._store = store

    def open(self, effect: Effect) -> int:
        """A read-only fd on the kept content of the effect's after state."""
        if effect.after.sha256 is None:
            raise FileNotFoundError(f"{effect.path}: no content was kept")
        return self._store.open(effect.after.sha256)
