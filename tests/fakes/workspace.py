"""Files a test puts in the workspace, owned as the owner's own would be.

Sandbox commands run as the command user (Lancelot's uid, or 10001 when Lancelot is root), so
files the owner made are that user's; a test running as root hands what it made over too.
"""

from __future__ import annotations

import os
from pathlib import Path

from core.tools.sandbox.limits import command_user


def own(*paths: Path) -> None:
    """Give `paths` (and everything under them) to the command user, when running as root."""
    if os.geteuid() != 0:
        return
    uid = command_user()
    for path in paths:
        os.chown(path, uid, uid, follow_symlinks=False)
        if path.is_dir() and not path.is_symlink():
            for top, dirs, files in os.walk(path):
                for name in (*dirs, *files):
                    os.chown(os.path.join(top, name), uid, uid, follow_symlinks=False)


def put(path: Path, text: str = "") -> Path:
    """Write a file (and its missing folders), owned by the command user."""
    made = [p for p in reversed(path.parents) if not p.exists()]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    own(*made, path)
    return path
