"""The undo backups: file contents kept by sha256 under LANCELOT_HOME/undo/objects."""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import stat
from pathlib import Path

from core.tools.effects.files import BLOCK, FILE_FLAGS
from core.tools.effects.model import FileState


class ObjectStore:
    """Content-addressed files. A backup is a hard link to the workspace file when it can be
    (the apply then replaces or unlinks the workspace name, so the content costs no copy and
    the workspace no longer reaches it), a copy otherwise. Readers check the hash anyway."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True, mode=0o700)

    def path(self, sha256: str) -> Path:
        """Where the object with this hash lives."""
        return self.root / sha256[:2] / sha256

    def has(self, sha256: str) -> bool:
        """Whether the object is stored."""
        return self.path(sha256).is_file()

    def keep(self, dir_fd: int, name: str, state: FileState) -> int:
        """Store the content of file `name` in `dir_fd`, which `state` describes (read just
        before); the bytes added (0 when already stored). OSError if it cannot."""
        if state.sha256 is None:
            raise ValueError("only a hashed file can be kept")
        final = self.path(state.sha256)
        if final.is_file():
            return 0
        final.parent.mkdir(exist_ok=True, mode=0o700)
        temp = final.parent / f".{secrets.token_hex(6)}.tmp"
        try:
            if not self._link(dir_fd, name, state, temp):
                self._copy(dir_fd, name, state.sha256, temp)
            os.replace(temp, final)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp)
            raise
        return state.size

    @staticmethod
    def _link(dir_fd: int, name: str, state: FileState, temp: Path) -> bool:
        """Hard-link the workspace file in when it is exactly the inode that was checked and
        has no other name in the workspace (another name could still rewrite it)."""
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        if info.st_ino != state.ino or info.st_nlink != 1 or not stat.S_ISREG(info.st_mode):
            return False
        if not info.st_mode & stat.S_IRUSR and os.geteuid() != 0:
            return False  # the object could not be read back
        try:
            os.link(name, temp, src_dir_fd=dir_fd, follow_symlinks=False)
        except OSError:  # another filesystem, or links not allowed here
            return False
        linked = os.stat(temp, follow_symlinks=False)
        if (linked.st_ino, linked.st_size, linked.st_mtime_ns) != (
            state.ino,
            state.size,
            state.mtime_ns,
        ):
            os.unlink(temp)
            return False
        return True

    @staticmethod
    def _copy(dir_fd: int, name: str, sha256: str, temp: Path) -> None:
        source = os.open(name, FILE_FLAGS, dir_fd=dir_fd)
        try:
            digest = hashlib.sha256()
            with open(temp, "xb") as out:
                while block := os.read(source, BLOCK):
                    digest.update(block)
                    out.write(block)
        finally:
            os.close(source)
        if digest.hexdigest() != sha256:
            raise OSError(f"{name} changed while it was being backed up")

    def open(self, sha256: str) -> int:
        """A read-only fd on the object; FileNotFoundError when it was pruned."""
        return os.open(self.path(sha256), FILE_FLAGS)

    def remove(self, sha256: str) -> None:
        """Forget an object (missing is fine)."""
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path(sha256))
