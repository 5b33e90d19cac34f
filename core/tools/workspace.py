"""The workspace guard: every path a tool touches must resolve inside the workspace."""

from __future__ import annotations

import contextlib
import errno
import os
import re
import unicodedata
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from urllib.parse import unquote

from core.errors import PolicyDenied

_DIR_NOFOLLOW = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
MOUNT = PurePosixPath("/workspace")  # how the sandbox (and the owner) names the workspace root

_SENSITIVE = re.compile(
    r"(^|/)(\.env(\..*)?|\.ssh|\.gnupg|\.aws|\.netrc|\.git-credentials|credentials(\.\w+)?"
    r"|id_(rsa|dsa|ecdsa|ed25519)(\.pub)?|.*\.(pem|key|p12|pfx|jks|keystore)"
    # Registry and cluster logins; a repository's config (remote URLs may carry tokens, and
    # its hooks and filters run programs when git runs).
    r"|\.pgpass|\.npmrc|\.pypirc|\.htpasswd|\.docker|\.kube|\.git/(config|hooks))(/|$)",
    re.IGNORECASE,
)


def is_sensitive(name: str) -> bool:
    """Whether a path names a sensitive file (keys, credentials, .env, a repository's
    config or hooks), however it is written: notes/../.env, /workspace/.env, ./.env."""
    cleaned = unquote(name).replace("\\", "/")
    parts = [p for p in cleaned.split("/") if p not in ("", ".", "..")]
    return bool(_SENSITIVE.search("/".join(parts)))


def _refuse(path: str, why: str) -> PolicyDenied:
    return PolicyDenied(
        "workspace-guard",
        ("Use a path inside /workspace, without '..'.",),
        message=f"{path!r}: {why}",
    )


class Workspace:
    """Maps names like `/workspace/old` or `notes/a.txt` to real paths under `root`."""

    def __init__(self, root: Path) -> None:
        root.mkdir(parents=True, exist_ok=True)
        self.root = root.resolve()

    def resolve(self, name: str, *, allow_sensitive: bool = False) -> Path:
        """The real path for `name`, or PolicyDenied if it would leave the workspace."""
        cleaned = self._normalised(name)
        relative = self._relative(name, cleaned)
        candidate = self.root.joinpath(*relative.parts) if relative.parts else self.root
        # strict=False: the target may not exist yet; symlinks on the way are followed.
        real = candidate.resolve(strict=False)
        if real != self.root and not real.is_relative_to(self.root):
            raise _refuse(name, "resolves outside the workspace")
        return self._allowed(name, real, allow_sensitive)

    def entry(self, name: str, *, allow_sensitive: bool = False) -> Path:
        """Like `resolve`, but the last component is taken as named, not followed: the
        directory entry itself (what `rm link` or `mv link x` act on is the link)."""
        relative = self._relative(name, self._normalised(name))
        if not relative.parts:
            return self.root
        parent = self.resolve(str(MOUNT / relative.parent), allow_sensitive=allow_sensitive)
        return self._allowed(name, parent / relative.name, allow_sensitive)

    def _allowed(self, name: str, real: Path, allow_sensitive: bool) -> Path:
        inside = real.relative_to(self.root).as_posix()
        if not allow_sensitive and _SENSITIVE.search(inside):
            raise PolicyDenied(
                "sensitive-path",
                ("Keep secrets out of the workspace.",),
                message=f"{name!r}: a sensitive file (keys, credentials, .env) is off limits",
            )
        return real

    @contextlib.contextmanager
    def directory(self, real: Path, *, create: bool = False) -> Iterator[int]:
        """An fd of the directory `real` (a path `resolve` returned), opened one component at
        a time from the root without following symlinks: a directory swapped for a symlink
        after `resolve` cannot lead outside. `create` makes missing directories on the way."""
        if real != self.root and not real.is_relative_to(self.root):
            raise _refuse(str(real), "not a path inside the workspace")
        fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY)
        try:
            for part in real.relative_to(self.root).parts:
                step = self._step(fd, part, real, create)
                os.close(fd)
                fd = step
            yield fd
        finally:
            os.close(fd)

    @contextlib.contextmanager
    def parent_of(self, real: Path, *, create: bool = False) -> Iterator[tuple[int, str]]:
        """(fd of the parent directory, name) for a path `resolve` returned (see `directory`)."""
        if real == self.root:
            raise _refuse("/workspace", "the workspace itself cannot be changed this way")
        with self.directory(real.parent, create=create) as fd:
            yield fd, real.name

    def _step(self, fd: int, part: str, real: Path, create: bool) -> int:
        try:
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, dir_fd=fd)
            return os.open(part, _DIR_NOFOLLOW, dir_fd=fd)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                shown = str(MOUNT / real.relative_to(self.root).as_posix())
                raise _refuse(shown, "a symlink or file is in the way") from None
            raise

    def display(self, path: Path) -> str:
        """The /workspace/... name of a path under the root (as named, links not followed)."""
        if ".." in path.parts or not (path.is_absolute() and path.is_relative_to(self.root)):
            path = path.resolve()
        inside = path.relative_to(self.root).as_posix()
        return str(MOUNT / inside) if inside != "." else str(MOUNT)

    @staticmethod
    def _normalised(name: str) -> str:
        if "\x00" in name or any(unicodedata.category(c) == "Cc" for c in name):
            raise _refuse(name, "control characters in a path")
        if any(unicodedata.category(c) == "Cs" for c in name):  # no file name can hold one
            raise _refuse(name, "a broken character (a lone surrogate) in a path")
        decoded = name
        for _ in range(3):  # once, twice, three times encoded
            try:
                step = unquote(decoded, errors="strict") if "%" in decoded else decoded
            except UnicodeDecodeError:  # overlong or broken UTF-8 escapes
                raise _refuse(name, "invalid percent-encoding") from None
            if step == decoded:
                break
            decoded = step
        if decoded != name:
            raise _refuse(name, "percent-encoded paths are not accepted")
        if "\\" in name:
            raise _refuse(name, "backslashes are not path separators here")
        return unicodedata.normalize("NFKC", name)

    @staticmethod
    def _relative(original: str, name: str) -> PurePosixPath:
        path = PurePosixPath(name)
        if path.is_absolute():
            if path != MOUNT and not path.is_relative_to(MOUNT):
                raise _refuse(original, "absolute paths must start with /workspace")
            path = path.relative_to(MOUNT)
        if ".." in path.parts:
            raise _refuse(original, "'..' is not allowed")
        return path
