"""git asked about a repository's objects, and nothing else of the repository.

git runs on the host in an empty git directory of its own whose object stores are the
repository's (the dry run's new objects, then the workspace's), so nothing the repository
configures is read: no config, hooks, replace refs or grafts can change an answer. An object
store that would take git outside the workspace (a symlink in it, an alternates file) is not
read at all.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import TracebackType

OID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
TIMEOUT = 30.0  # seconds for one git call
MAX_ENTRIES = 1_000_000  # files looked at in one object store before giving up


class Unreadable(Exception):
    """The objects cannot be read safely, or git could not answer."""


def object_store(root: Path, gitdir: str) -> Path | None:
    """`root`/`gitdir`/objects when it is a real directory that keeps git inside the tree
    (no symlink on the way or in it, no alternates file); None when there is none.
    Unreadable when git would be taken elsewhere."""
    path = root
    for part in (*gitdir.split("/"), "objects"):
        path = path / part
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            return None
        if stat.S_ISLNK(info.st_mode):
            raise Unreadable(f"{path} is a symlink")
        if not stat.S_ISDIR(info.st_mode):
            return None
    _check_inside(path)
    return path


def _check_inside(objects: Path) -> None:
    """No symlink two levels down (fan-out folders, pack/, info/) and no alternates."""
    seen = 0
    with os.scandir(objects) as tops:
        for top in tops:
            if top.is_symlink():
                raise Unreadable(f"{top.path} is a symlink")
            if not top.is_dir(follow_symlinks=False):
                continue
            with os.scandir(top.path) as entries:
                for entry in entries:
                    seen += 1
                    if seen > MAX_ENTRIES:
                        raise Unreadable(f"{objects} holds too many files to check")
                    if entry.is_symlink():
                        raise Unreadable(f"{entry.path} is a symlink")
                    alternates = top.name == "info" and entry.name.endswith("alternates")
                    if alternates and entry.is_file(follow_symlinks=False):
                        raise Unreadable(f"{entry.path} points git at other objects")


class ObjectReader:
    """git over some object stores (the first searched first). Blocking: use a thread.

    Use as a context manager: it makes, and then removes, its own empty git directory.
    """

    def __init__(self, stores: Sequence[Path], shallow: bytes | None = None) -> None:
        """`shallow`: the repository's list of shallow commits, if it is a shallow clone
        (history below them is missing by design, not lost)."""
        self._stores = stores
        self._shallow = shallow
        self._gitdir: Path | None = None

    def __enter__(self) -> ObjectReader:
        gitdir = Path(tempfile.mkdtemp(prefix="lancelot-git-"))
        try:
            (gitdir / "refs").mkdir()
            (gitdir / "objects" / "info").mkdir(parents=True)
            (gitdir / "HEAD").write_text("ref: refs/heads/none\n")
            listed = [str(store) for store in self._stores]
            if any("\n" in name or name.startswith('"') for name in listed):
                raise Unreadable("an object store's path cannot be given to git")
            (gitdir / "objects" / "info" / "alternates").write_text(
                "".join(f"{n}\n" for n in listed)
            )
            if self._shallow is not None:
                (gitdir / "shallow").write_bytes(self._shallow)
        except BaseException:
            shutil.rmtree(gitdir, ignore_errors=True)
            raise
        self._gitdir = gitdir
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._gitdir is not None:
            shutil.rmtree(self._gitdir, ignore_errors=True)
            self._gitdir = None

    def commits(self, names: Iterable[str]) -> dict[str, str | None]:
        """name -> the commit it names, or None. A name is an object id (a branch must hold
        a commit itself) or `<id>^{commit}` (a tag may hold a tag object that peels to one).
        Anything else is never handed to git."""
        names = list(names)
        asked = list(dict.fromkeys(n for n in names if OID.fullmatch(n.removesuffix("^{commit}"))))
        found: dict[str, str | None] = dict.fromkeys(names)
        if not asked:
            return found
        lines = self._git(
            ["cat-file", "--batch-check=%(objectname) %(objecttype)"],
            "".join(f"{n}\n" for n in asked),
        ).splitlines()
        if len(lines) != len(asked):
            raise Unreadable("git did not answer for every object")
        for name, line in zip(asked, lines, strict=True):
            oid, _, kind = line.partition(" ")
            found[name] = oid if kind == "commit" else None
        return found

    def unreachable(self, commit: str, tips: Iterable[str]) -> bool:
        """Whether `commit` has history no tip reaches (or git cannot walk it to tell)."""
        walk = "".join(f"{line}\n" for line in (commit, *(f"^{tip}" for tip in tips)))
        try:
            return bool(self._git(["rev-list", "--max-count=1", "--stdin"], walk).strip())
        except Unreadable:
            return True

    def _git(self, args: list[str], stdin: str) -> str:
        if self._gitdir is None:
            raise RuntimeError("ObjectReader used outside its with block")
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self._gitdir),
            "GIT_DIR": str(self._gitdir),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_NO_REPLACE_OBJECTS": "1",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_OPTIONAL_LOCKS": "0",
            "LC_ALL": "C",
        }
        program = shutil.which("git", path=env["PATH"])
        if program is None:
            raise Unreadable("git is not installed on this machine")
        try:
            done = subprocess.run(
                [program, *args],
                input=stdin,
                capture_output=True,
                text=True,
                env=env,
                cwd=self._gitdir,
                timeout=TIMEOUT,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise Unreadable(f"git could not be asked: {exc}") from exc
        if done.returncode != 0:
            raise Unreadable(f"git failed: {done.stderr.strip()[:200]}")
        return done.stdout
