"""SafeREPL against a writer that keeps flipping paths between real files (or folders) and
symlinks out of the workspace: whatever the timing, nothing outside is read or changed."""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
import time
from pathlib import Path

from core.errors import PolicyDenied
from core.tools.action import ToolAction
from core.tools.capability import CapabilityTokens
from core.tools.safe_repl import SafeRepl
from core.tools.workspace import Workspace

SECRET = "CANARY-SECRET"
SECONDS = 2.0
COMMANDS = [
    "cat f",
    "cat d/x",
    "grep CANARY f",
    "grep -r CANARY /workspace",
    "find d",
    "ls d",
    "ls -l d",
    "ls -la /workspace",
    "cp f copy",
    "cp d/x copy",
    "cp copy f",
    "cp copy d/x",
    "cp -r d tree",
    "rm -rf tree",
    "mv f moved",
    "mv moved f",
    "mv d/x moved",
    "mv moved d/x",
    "touch f",
    "touch d/x",
    "mkdir d/sub",
    "rm d/x",
    "rm -r d/sub",
    "rm f",
    "rm -rf d",
]


def snapshot(root: Path) -> dict[str, tuple[int, int, bytes]]:
    """Every file below `root`: mode, mtime and content."""
    found = {}
    for path in sorted(root.rglob("*")):
        info = path.lstat()
        content = path.read_bytes() if path.is_file() else b""
        found[str(path.relative_to(root))] = (info.st_mode, info.st_mtime_ns, content)
    return found


def create(path: Path) -> None:
    """A new file with some text; never through a symlink SafeREPL may have moved there."""
    handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(handle, "w") as file:
        file.write("inside")


class Flipper(threading.Thread):
    """Flips ws/f between a file and a link to the canary, ws/d between a folder and a link
    to the canary's folder, as fast as it can."""

    def __init__(self, ws: Path, outside: Path) -> None:
        super().__init__(daemon=True)
        self.ws, self.outside = ws, outside
        self.stop = threading.Event()
        self.flips = 0

    def run(self) -> None:
        f, d = self.ws / "f", self.ws / "d"
        while not self.stop.is_set():
            for link in (True, False):
                with contextlib.suppress(OSError):
                    self._clear(f)
                    if link:
                        f.symlink_to(self.outside / "secret.txt")
                    else:
                        create(f)
                with contextlib.suppress(OSError):
                    self._clear(d)
                    if link:
                        d.symlink_to(self.outside)
                    else:
                        d.mkdir()
                        create(d / "x")
                self.flips += 1

    @staticmethod
    def _clear(path: Path) -> None:
        if path.is_symlink() or path.is_file():
            path.unlink()
        elif path.is_dir():
            shutil.rmtree(path)


async def test_a_flipping_writer_never_leads_safe_repl_outside(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET)
    (outside / "x").write_text(SECRET)
    (outside / "keep").mkdir()
    (outside / "keep" / "deep.txt").write_text(SECRET)
    before = snapshot(outside)
    workspace = Workspace(tmp_path / "ws")
    tokens = CapabilityTokens(b"race")
    repl = SafeRepl(workspace, tokens)
    flipper = Flipper(workspace.root, outside)
    flipper.start()
    runs, leaks, refusals = 0, [], 0
    deadline = time.monotonic() + SECONDS
    try:
        while time.monotonic() < deadline:
            for command in COMMANDS:
                action = ToolAction("shell.exec", command, {})
                try:
                    result = await repl.run(action, tokens.issue(action.digest))
                except PolicyDenied:
                    refusals += 1
                    continue
                runs += 1
                if SECRET in result.output:
                    leaks.append((command, result.output))
    finally:
        flipper.stop.set()
        flipper.join()
    assert flipper.flips > 50
    assert runs > 200
    assert leaks == []
    assert snapshot(outside) == before
