"""Helpers for the effect tests: build a workspace, snapshot it, dry-run with a valid token."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from core.tools.action import ToolAction
from core.tools.capability import CapabilityTokens
from core.tools.effects import DryRun, ShellEffects
from core.tools.sandbox.limits import command_user
from tests.fakes.processes import forked

GIT = [
    "git",
    "-c",
    "user.name=t",
    "-c",
    "user.email=t@example.org",
    "-c",
    "init.defaultBranch=main",
]

Snapshot = dict[str, tuple[str, int, str, int]]


def make(root: Path, files: dict[str, str]) -> None:
    """Write `files` (path -> text; a path ending in "/" is a directory) under `root`, owned
    by the sandbox's command user as the workspace would be."""
    for name, text in files.items():
        path = root / name
        if name.endswith("/"):
            path.mkdir(parents=True, exist_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    hand_over(root)


def hand_over(root: Path) -> None:
    """Give the tree to the sandbox's command user (when the tests run as root)."""
    if os.geteuid() != 0:
        return
    uid = command_user()
    os.chown(root, uid, uid)
    for top, dirs, files in os.walk(root):
        for name in dirs + files:
            os.chown(os.path.join(top, name), uid, uid, follow_symlinks=False)


def git(repo: Path, *args: str) -> str:
    """Run git on the host in `repo` (its output)."""
    done = subprocess.run([*GIT, *args], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def commit(repo: Path, message: str) -> str:
    """A commit of one more line in f; its id."""
    with (repo / "f").open("a") as handle:
        handle.write(message + "\n")
    git(repo, "add", "f")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def snapshot(root: Path) -> Snapshot:
    """path -> (kind, mode, content hash or link target, owner) for `root` and everything
    under it."""
    found: Snapshot = {".": ("dir", stat.S_IMODE(root.stat().st_mode), "", root.stat().st_uid)}
    for top, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(top, name)
            info = os.lstat(path)
            rel = os.path.relpath(path, root)
            mode = stat.S_IMODE(info.st_mode)
            if stat.S_ISLNK(info.st_mode):
                found[rel] = ("symlink", mode, os.readlink(path), info.st_uid)
            elif stat.S_ISDIR(info.st_mode):
                found[rel] = ("dir", mode, "", info.st_uid)
            elif stat.S_ISFIFO(info.st_mode):
                found[rel] = ("fifo", mode, "", info.st_uid)
            else:
                digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
                found[rel] = ("file", mode, digest, info.st_uid)
    return found


async def dry_run(engine: ShellEffects, capabilities: CapabilityTokens, command: str) -> DryRun:
    """Dry-run `command` with a valid capability token, as the policy engine would issue it."""
    action = ToolAction("shell.exec", command)
    return await engine.dry_run(action, capabilities.issue(action.digest))


def kinds(run: DryRun) -> dict[str, str]:
    """path -> effect kind."""
    return {effect.path: effect.kind for effect in run.effects.effects}


NOBODY = 65534


@contextlib.contextmanager
def shared_folder() -> Iterator[Path]:
    """A folder anyone may write, for `as_nobody` (pytest's folders are root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="lancelot-effects-"))
    os.chmod(folder, 0o777)  # noqa: S103 (a test folder for a user that is not root)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def as_nobody(work: Callable[[], str]) -> str:
    """`work`'s answer, run in a forked child that is no longer root (as a non-root Lancelot
    is); what it raised, named, if it failed. Run as another user already: run as is."""
    return as_user(NOBODY, work)


def as_user(uid: int, work: Callable[[], str]) -> str:
    """`work`'s answer, run in a forked child as user and group `uid` (when root)."""

    def switched() -> str:
        if os.geteuid() == 0:
            os.setgid(uid)
            os.setuid(uid)
        return work()

    return forked(switched)
