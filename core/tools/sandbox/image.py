"""`lancelot sandbox build`: the sandbox image, made locally from Debian packages.

No image registry is involved: debootstrap fetches Debian packages from a mirror into a
directory, a non-root user is added, and the directory is imported as an image.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from core.errors import ToolFailed
from core.tools.sandbox.engine import DockerEngine
from core.tools.sandbox.limits import FALLBACK_UID, keeper_user

log = logging.getLogger(__name__)

SUITE = "bookworm"
APT_SOURCES = (Path("/etc/apt/sources.list.d/debian.sources"), Path("/etc/apt/sources.list"))
PACKAGES = ("git", "python3-minimal", "procps", "ca-certificates")
# Left out of the image: package caches, docs and translations nobody reads in a sandbox.
PRUNE = ("var/cache/apt/archives", "var/lib/apt/lists", "usr/share/doc", "usr/share/man",
         "usr/share/locale", "usr/share/info")  # fmt: skip
CHANGES = [
    f"USER {FALLBACK_UID}",
    "WORKDIR /workspace",
    "ENV PATH=/usr/local/bin:/usr/bin:/bin HOME=/tmp LANG=C.UTF-8",
    'CMD ["sleep", "infinity"]',
]


@dataclass(frozen=True, slots=True)
class BuildReport:
    """What `build` did."""

    image: str
    skipped: bool
    seconds: float


def apt_mirror(sources: tuple[Path, ...] = APT_SOURCES) -> str | None:
    """The Debian mirror this machine's apt already uses (deb822 or one-line format)."""
    for path in sources:
        try:
            lines = path.read_text().splitlines()
        except OSError:
            continue
        for line in lines:
            words = line.split()
            if "security" in line or not words:
                continue  # the security archive holds updates only, not a whole suite
            if words[0] == "URIs:" and len(words) > 1:
                return words[1]
            if words[0] == "deb":
                uri = next((w for w in words[1:] if "://" in w), None)
                if uri:
                    return uri
    return None


def build(
    engine: DockerEngine,
    image: str,
    *,
    mirror: str | None = None,
    force: bool = False,
    workdir: Path | None = None,
) -> BuildReport:
    """Build `image` unless it exists (or `force`). Blocking; raises ToolFailed on failure."""
    started = time.monotonic()
    if not force and exists(engine, image):
        return BuildReport(image, True, 0.0)
    mirror = mirror or apt_mirror()
    if mirror is None:
        raise ToolFailed("no Debian mirror found in apt's sources; pass --mirror URL")
    debootstrap = shutil.which("debootstrap")
    if debootstrap is None:
        raise ToolFailed("debootstrap is not installed (apt-get install debootstrap)")
    if os.geteuid() != 0:
        raise ToolFailed(
            "building the sandbox image needs root (debootstrap makes a chroot): run "
            f"sudo {_this_command()} sandbox build"
        )
    with tempfile.TemporaryDirectory(prefix="lancelot-sandbox-", dir=workdir) as scratch:
        rootfs = Path(scratch) / "rootfs"
        _bootstrap(debootstrap, rootfs, mirror)
        prepare_rootfs(rootfs)
        import_rootfs(engine, rootfs, image, Path(scratch) / "rootfs.tar")
    return BuildReport(image, False, time.monotonic() - started)


def exists(engine: DockerEngine, image: str) -> bool:
    """Whether `image` is already in the engine (SandboxUnavailable if the engine is down)."""
    from docker.errors import ImageNotFound

    try:
        engine.api.inspect_image(image)
    except ImageNotFound:
        return False
    return True


def _bootstrap(debootstrap: str, rootfs: Path, mirror: str) -> None:
    command = [
        debootstrap,
        "--variant=minbase",
        f"--include={','.join(PACKAGES)}",
        SUITE,
        str(rootfs),
        mirror,
    ]
    log.info("sandbox build: %s", " ".join(command))
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = (done.stdout + done.stderr).strip().splitlines()[-3:]
        raise ToolFailed(f"debootstrap failed (exit {done.returncode}): {' / '.join(tail)}")


def prepare_rootfs(rootfs: Path) -> None:
    """Add the sandbox users and the /workspace mount point; drop caches and docs."""
    for relative in PRUNE:
        target = rootfs / relative
        if target.is_dir():
            shutil.rmtree(target)
            target.mkdir(parents=True)
    users = {"sandbox": FALLBACK_UID, "keeper": keeper_user(FALLBACK_UID)}
    with (rootfs / "etc/passwd").open("a") as passwd, (rootfs / "etc/group").open("a") as group:
        for name, uid in users.items():
            passwd.write(f"{name}:x:{uid}:{uid}:{name}:/tmp:/bin/sh\n")
            group.write(f"{name}:x:{uid}:\n")
    (rootfs / "workspace").mkdir(mode=0o755, exist_ok=True)


def import_rootfs(engine: DockerEngine, rootfs: Path, image: str, tarball: Path) -> None:
    """Pack `rootfs` and import it into the engine as `image` (repository:tag)."""
    with tarfile.open(tarball, "w") as tar:
        tar.add(rootfs, arcname=".")
    repository, _, tag = image.rpartition(":") if ":" in image else (image, "", "latest")
    engine.api.import_image_from_file(
        str(tarball), repository=repository, tag=tag or "latest", changes=CHANGES
    )
    log.info("sandbox build: imported %s", image)


def _this_command() -> str:
    """This program by its full path: sudo's PATH does not have a virtualenv's bin."""
    program = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if program is not None and program.name == "lancelot" and program.exists():
        return str(program.resolve())
    return str(Path(sys.executable).with_name("lancelot"))
