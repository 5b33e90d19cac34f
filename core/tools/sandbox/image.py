"""`lancelot sandbox build`: the sandbox image, made locally from Debian packages.

No image registry is involved (`core/tools/sandbox/debian.py`): debootstrap fetches Debian
packages into a directory, the sandbox's non-root users are added, and the directory is
imported as an image.
"""

from __future__ import annotations

import sys
from pathlib import Path

from core.tools.sandbox.debian import (
    BuildReport,
    DebianImage,
    apt_mirror,
    build_debian_image,
    exists,
)
from core.tools.sandbox.engine import DockerEngine
from core.tools.sandbox.limits import FALLBACK_UID, keeper_user

__all__ = ["SANDBOX", "BuildReport", "apt_mirror", "build", "exists", "prepare_rootfs"]


def prepare_rootfs(rootfs: Path) -> None:
    """Add the sandbox users and the /workspace mount point."""
    users = {"sandbox": FALLBACK_UID, "keeper": keeper_user(FALLBACK_UID)}
    with (rootfs / "etc/passwd").open("a") as passwd, (rootfs / "etc/group").open("a") as group:
        for name, uid in users.items():
            passwd.write(f"{name}:x:{uid}:{uid}:{name}:/tmp:/bin/sh\n")
            group.write(f"{name}:x:{uid}:\n")
    (rootfs / "workspace").mkdir(mode=0o755, exist_ok=True)


SANDBOX = DebianImage(
    packages=("git", "python3-minimal", "procps", "ca-certificates"),
    prepare=prepare_rootfs,
    changes=(
        f"USER {FALLBACK_UID}",
        "WORKDIR /workspace",
        "ENV PATH=/usr/local/bin:/usr/bin:/bin HOME=/tmp LANG=C.UTF-8",
        'CMD ["sleep", "infinity"]',
    ),
)


def build(
    engine: DockerEngine,
    image: str,
    *,
    mirror: str | None = None,
    force: bool = False,
    workdir: Path | None = None,
) -> BuildReport:
    """Build the sandbox `image` unless it exists (or `force`). Blocking; raises ToolFailed."""
    return build_debian_image(
        engine,
        image,
        SANDBOX,
        as_root=f"sudo {this_command()} sandbox build",
        mirror=mirror,
        force=force,
        workdir=workdir,
    )


def this_command() -> str:
    """This program by its full path: sudo's PATH does not have a virtualenv's bin."""
    program = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if program is not None and program.name == "lancelot" and program.exists():
        return str(program.resolve())
    return str(Path(sys.executable).with_name("lancelot"))
