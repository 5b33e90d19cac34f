"""Overlay slots: hardened single-use containers, each over its own fresh overlay of the
workspace (the workspace the read-only lower layer, a new upper layer under LANCELOT_HOME).

Docker's local volume driver mounts the overlay, so neither Lancelot nor the container needs
a privilege for it. A container's mounts are fixed when it is created, and an overlay must
not be reused once a command has looked through it (it caches what the workspace held), so
each slot serves exactly one command: its main process waits on stdin for the command and
the container stops when the command ends, which also stops anything it left running.

The workspace's sensitive files are masked in every slot (core/tools/sandbox/masks.py): a
dry run never reads them, and cannot write, move or delete them either (the stand-in is a
read-only, busy mount), so its effects never name one and its apply never loses one.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.tools.effects.tree import remove_tree
from core.tools.sandbox.engine import DockerEngine, SandboxUnavailable
from core.tools.sandbox.limits import (
    EXEC_ENV,
    MOUNT,
    OWNER_LABEL,
    SandboxLimits,
    command_user,
    host_config,
    owner_tag,
)
from core.tools.sandbox.masks import NO_MASKS, Masks, StandIns

KIND_LABEL = "lancelot.dryrun"  # not the pool's label: its stale sweep must not take these
LAUNCH = 'cmd=$(cat) && exec /bin/sh -c "$cmd"'
UNSAFE_IN_OPTIONS = (",", ":", "\\")  # the mount option string cannot carry these


@dataclass(frozen=True, slots=True)
class OverlaySlot:
    """A started container whose /workspace is a fresh overlay, waiting for one command."""

    id: str
    base: Path  # holds upper/ and work/
    volume: str
    container: str
    stream: Any  # the attached stdin/stdout/stderr socket
    masks: Masks = NO_MASKS  # the sensitive paths masked in it

    @property
    def upper(self) -> Path:
        """The upper layer: what the command wrote, whiteouts for what it deleted."""
        return self.base / "upper"


def mount_options(lower: Path, base: Path, userxattr: bool) -> str:
    """The overlay's mount data: no redirects, no metacopy, no index, so the upper layer holds
    only whole files, whiteouts and opaque directories. `userxattr`: mark opaque directories
    with user.overlay.* (which Lancelot can read without root) instead of trusted.overlay.*."""
    paths = (str(lower), str(base / "upper"), str(base / "work"))
    for path in paths:
        if any(char in path for char in UNSAFE_IN_OPTIONS):
            raise SandboxUnavailable(
                f"dry runs need a data directory path without ',' ':' or '\\' (got {path})"
            )
    options = "lowerdir={},upperdir={},workdir={},redirect_dir=nofollow,index=off,metacopy=off"
    options = options.format(*paths)
    return options + ",userxattr" if userxattr else options


def labels(workspace: Path) -> dict[str, str]:
    """Labels marking a dry-run container or volume as ours, and whose."""
    return {KIND_LABEL: "1", OWNER_LABEL: owner_tag(workspace)}


class SlotFactory:
    """Makes and removes slots. Every method blocks (Docker SDK): call it in a thread."""

    def __init__(
        self,
        engine: DockerEngine,
        workspace: Path,
        runs_dir: Path,
        limits: SandboxLimits,
        stand_ins: StandIns | None = None,
    ) -> None:
        """`stand_ins`: what masks sensitive files (None: stand-ins beside `runs_dir`)."""
        self._engine = engine
        self._workspace = workspace
        self.stand_ins = stand_ins or StandIns(runs_dir.parent / "masks")
        self._runs = runs_dir
        self._limits = limits
        self.uid = command_user()
        # Only root can read trusted.* xattrs; anyone else has overlayfs use user.* ones.
        self.userxattr = os.geteuid() != 0
        self.launched: list[str] = []  # every container id made (tests inspect them)
        # Present from before the first volume this home's slots make until a sweep finds
        # none left: a start with no mark has nothing to sweep, and never loads the SDK.
        self.mark = runs_dir.parent / "dryruns.out"

    @property
    def opaque_xattr(self) -> str:
        """The xattr that marks an opaque directory in this factory's upper layers."""
        return "user.overlay.opaque" if self.userxattr else "trusted.overlay.opaque"

    @property
    def workspace(self) -> Path:
        """The workspace the slots overlay."""
        return self._workspace

    def create(self, masks: Masks = NO_MASKS) -> OverlaySlot:
        """A new slot with `masks` over the workspace's sensitive paths, started and
        attached; SandboxUnavailable when the engine cannot."""
        self._engine.require_image(self._limits.image)
        api = self._engine.api
        self._leave_mark()
        slot_id = secrets.token_hex(8)
        base = self._prepare_dirs(slot_id)
        volume, container, stream = f"lancelot-dryrun-{slot_id}", None, None
        try:
            api.create_volume(
                volume,
                driver="local",
                driver_opts={
                    "type": "overlay",
                    "device": "overlay",
                    "o": mount_options(self._workspace, base, self.userxattr),
                },
                labels=labels(self._workspace),
            )
            container = self._create_container(volume, masks)
            stream = api.attach_socket(
                container, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}
            )
            api.start(container)
        except BaseException:
            self.remove(OverlaySlot(slot_id, base, volume, container or "", stream))
            raise
        return OverlaySlot(slot_id, base, volume, container, stream, masks)

    def _prepare_dirs(self, slot_id: str) -> Path:
        base = self._runs / slot_id
        upper = base / "upper"
        base.mkdir(parents=True, mode=0o700)
        upper.mkdir()
        (base / "work").mkdir()
        # The merged root shows the upper root's owner and mode: the workspace's mode, and a
        # command user who may write there (as DockerSandbox arranges for its bind mount).
        os.chmod(upper, os.stat(self._workspace).st_mode & 0o7777)
        if os.geteuid() == 0:
            os.chown(upper, self.uid, self.uid)
        return base

    def _create_container(self, volume: str, masks: Masks) -> str:
        api = self._engine.api
        hardening = host_config(self._limits, self._workspace)
        # nocopy: Docker would otherwise chown a new volume's root to the image's mount point
        # (root) and copy the image's files in - a change of the command's own making.
        hardening["binds"] = {volume: {"bind": MOUNT, "mode": "rw,nocopy"}}
        hardening["mounts"] = masks.mounts(self.stand_ins)
        created = api.create_container(
            self._limits.image,
            command=["/bin/sh", "-c", LAUNCH],
            user=f"{self.uid}:{self.uid}",
            working_dir=MOUNT,
            environment=EXEC_ENV,
            labels=labels(self._workspace),
            host_config=api.create_host_config(**hardening),
            network_disabled=True,
            stdin_open=True,
        )
        container: str = created["Id"]
        self.launched.append(container)
        return container

    def remove(self, slot: OverlaySlot, *, keep_upper: bool = False) -> None:
        """Remove the slot's container and volume (and its directories unless `keep_upper`)."""
        close_stream(slot.stream)
        with contextlib.suppress(Exception):
            if slot.container:
                self._engine.api.remove_container(slot.container, force=True)
        with contextlib.suppress(Exception):
            self._engine.api.remove_volume(slot.volume, force=True)
        if keep_upper:
            remove_tree(slot.base / "work")
        else:
            remove_tree(slot.base)

    def _leave_mark(self) -> None:
        """The mark, before anything it stands for exists (a kill may follow). Not synced:
        should a power loss take it, the pool's own sweep at its first use still runs."""
        if not self.mark.exists():
            self.mark.parent.mkdir(parents=True, exist_ok=True)
            self.mark.touch()

    def sweep(self) -> None:
        """Remove dry-run containers and volumes a previous run of this data directory left;
        the mark goes once none is left."""
        api = self._engine.api
        wanted = [f"{KIND_LABEL}=1", f"{OWNER_LABEL}={owner_tag(self._workspace)}"]
        containers = api.containers(all=True, filters={"label": wanted})
        left = [c for c in containers if not _removed(api.remove_container, c["Id"])]
        found = api.volumes(filters={"label": wanted}) or {}
        volumes = found.get("Volumes") or ()
        left += [v for v in volumes if not _removed(api.remove_volume, v["Name"])]
        if not left:
            self.mark.unlink(missing_ok=True)

    def sweep_if_marked(self) -> None:
        """`sweep` when a previous run may have left something: the start-up's sweep."""
        if self.mark.exists():
            self.sweep()


def _removed(remove: Any, name: str) -> bool:
    """Remove one container or volume (forced); False if the engine refused."""
    try:
        remove(name, force=True)
    except Exception:  # gone already, or busy: the next sweep tries again
        return False
    return True


def raw_socket(stream: Any) -> socket.socket:
    """The socket under the SDK's attach stream (for sendall and a half-close)."""
    raw = getattr(stream, "_sock", stream)
    if not isinstance(raw, socket.socket):
        raise SandboxUnavailable("the sandbox engine connection cannot take a command")
    return raw


def close_stream(stream: Any) -> None:
    """Close the attach socket, the HTTP response around it and the connection beneath it."""
    if stream is None:
        return
    for closable in (getattr(stream, "_response", None), stream, getattr(stream, "_sock", None)):
        if closable is not None:
            with contextlib.suppress(OSError, ValueError):
                closable.close()
