"""Removing a dry run's directories, whatever modes a command left on them."""

from __future__ import annotations

import logging
import os
import shutil
import stat
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


def remove_tree(path: Path) -> None:
    """Remove `path` and everything in it (links not followed). Directories a command made
    unreadable are opened up first; what still cannot go (overlayfs's own work directory when
    Lancelot is not root) is logged and left."""

    opened: set[str] = set()

    def unlock(_function: Any, failed: str, exc_info: Any) -> None:
        if failed in opened:  # opened up once already, and still it cannot go
            log.info("dry run leftovers not removed: %s: %s", failed, exc_info[1])
            return
        opened.add(failed)
        parent = os.path.dirname(failed)
        try:
            for target in (parent, failed):
                info = os.lstat(target)
                if stat.S_ISDIR(info.st_mode):
                    os.chmod(target, stat.S_IMODE(info.st_mode) | stat.S_IRWXU)
            if os.path.isdir(failed) and not os.path.islink(failed):
                shutil.rmtree(failed, onerror=unlock)  # locked folders may nest
            else:
                os.unlink(failed)
        except FileNotFoundError:
            return
        except OSError as exc:
            log.info("dry run leftovers not removed: %s: %s", failed, exc)

    if not path.exists() and not path.is_symlink():
        return
    shutil.rmtree(path, onerror=unlock)
