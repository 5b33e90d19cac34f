"""Docker images made locally from Debian packages, with no image registry involved.

debootstrap fetches Debian packages from a mirror into a directory, the caller prepares that
directory (users, files), and it is imported into the engine as an image. The sandbox image
(`lancelot sandbox build`) and the container's base image (`lancelot container base`) are
both made this way.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import tarfile
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from core.errors import ToolFailed
from core.tools.sandbox.engine import DockerEngine

log = logging.getLogger(__name__)

SUITE = "bookworm"
APT_SOURCES = (Path("/etc/apt/sources.list.d/debian.sources"), Path("/etc/apt/sources.list"))
# Left out of an image: package caches, docs and translations nobody reads there.
PRUNE = ("var/cache/apt/archives", "var/lib/apt/lists", "usr/share/doc", "usr/share/man",
         "usr/share/locale", "usr/share/info")  # fmt: skip


@dataclass(frozen=True, slots=True)
class DebianImage:
    """What goes into an image: the packages on top of Debian's minimal base, a step that
    prepares the directory before it is packed, and the image's Dockerfile-like settings
    (USER, WORKDIR, ENV, CMD)."""

    packages: tuple[str, ...]
    prepare: Callable[[Path], None]
    changes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class BuildReport:
    """What a build did."""

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


def exists(engine: DockerEngine, image: str) -> bool:
    """Whether `image` is already in the engine (SandboxUnavailable if the engine is down)."""
    from docker.errors import ImageNotFound

    try:
        engine.api.inspect_image(image)
    except ImageNotFound:
        return False
    return True


def build_debian_image(
    engine: DockerEngine,
    image: str,
    spec: DebianImage,
    *,
    as_root: str,
    mirror: str | None = None,
    force: bool = False,
    workdir: Path | None = None,
) -> BuildReport:
    """Build `image` from `spec` unless it exists (or `force`). Blocking; raises ToolFailed
    on failure; `as_root` is the command to suggest when this process is not root."""
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
        raise ToolFailed(f"building {image} needs root (debootstrap makes a chroot): run {as_root}")
    with tempfile.TemporaryDirectory(prefix="lancelot-image-", dir=workdir) as scratch:
        rootfs = Path(scratch) / "rootfs"
        _bootstrap(debootstrap, rootfs, mirror, spec.packages)
        prune(rootfs)
        spec.prepare(rootfs)
        import_rootfs(engine, rootfs, image, Path(scratch) / "rootfs.tar", spec.changes)
    return BuildReport(image, False, time.monotonic() - started)


def _bootstrap(debootstrap: str, rootfs: Path, mirror: str, packages: tuple[str, ...]) -> None:
    command = [
        debootstrap,
        "--variant=minbase",
        f"--include={','.join(packages)}",
        SUITE,
        str(rootfs),
        mirror,
    ]
    log.info("image build: %s", " ".join(command))
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = (done.stdout + done.stderr).strip().splitlines()[-3:]
        raise ToolFailed(f"debootstrap failed (exit {done.returncode}): {' / '.join(tail)}")


def prune(rootfs: Path) -> None:
    """Empty the package caches, docs and translations (their directories stay)."""
    for relative in PRUNE:
        target = rootfs / relative
        if target.is_dir():
            shutil.rmtree(target)
            target.mkdir(parents=True)


def import_rootfs(
    engine: DockerEngine, rootfs: Path, image: str, tarball: Path, changes: tuple[str, ...]
) -> None:
    """Pack `rootfs` and import it into the engine as `image` (repository:tag)."""
    with tarfile.open(tarball, "w") as tar:
        tar.add(rootfs, arcname=".")
    repository, _, tag = image.rpartition(":") if ":" in image else (image, "", "latest")
    engine.api.import_image_from_file(
        str(tarball), repository=repository, tag=tag or "latest", changes=list(changes)
    )
    log.info("image build: imported %s", image)
