"""The hardening every sandbox container gets: limits, users, and the docker create options."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.tools.workspace import MOUNT as WORKSPACE_MOUNT

MOUNT = str(WORKSPACE_MOUNT)  # where the workspace appears inside the sandbox
LABEL = "lancelot.sandbox"  # every container we start carries it, so stale ones can be found
OWNER_LABEL = "lancelot.sandbox.owner"  # which data directory started it (engines are shared)
FALLBACK_UID = 10001  # the command user when Lancelot itself runs as root
TMP = "/tmp"  # noqa: S108 - the container's own private tmpfs, not the host's
EXEC_ENV = {"HOME": TMP, "LANG": "C.UTF-8", "PATH": "/usr/local/bin:/usr/bin:/bin"}


@dataclass(frozen=True, slots=True)
class SandboxLimits:
    """Resource limits for one sandbox container and the commands run in it."""

    image: str = "lancelot-sandbox:latest"
    pool_size: int = 2
    timeout_seconds: float = 30.0
    memory_mb: int = 512
    cpus: float = 1.0
    pids: int = 128
    tmpfs_mb: int = 64
    nofile: int = 1024
    nproc: int = 1024
    file_size_mb: int = 256


def command_user() -> int:
    """The uid commands run as: Lancelot's own (so workspace files stay the owner's), never 0."""
    uid = os.getuid()
    return uid if uid != 0 else FALLBACK_UID


def let_command_user_write(root: Path) -> None:
    """Let the command user write the workspace root when Lancelot runs as root."""
    uid = command_user()
    if os.getuid() == 0 and root.stat().st_uid != uid:
        os.chown(root, uid, uid)


def keeper_user(command_uid: int) -> int:
    """The uid of the container's idle process: a different one, so `kill -1` by a command
    (which the pool uses to clean up after it) cannot stop the container."""
    return FALLBACK_UID + 1 if command_uid != FALLBACK_UID + 1 else FALLBACK_UID + 2


def owner_tag(workspace: Path) -> str:
    """A short stable tag for the data directory that owns a container."""
    return hashlib.sha256(str(workspace.resolve()).encode()).hexdigest()[:16]


def container_labels(workspace: Path) -> dict[str, str]:
    """Labels marking a container as ours, and whose."""
    return {LABEL: "1", OWNER_LABEL: owner_tag(workspace)}


def host_config(limits: SandboxLimits, workspace: Path) -> dict[str, Any]:
    """Keyword arguments for the Docker API's create_host_config: the hardening itself."""
    from docker.types import Ulimit

    memory = f"{limits.memory_mb}m"
    file_size = limits.file_size_mb * 1024 * 1024
    return {
        "network_mode": "none",
        "read_only": True,
        "tmpfs": {TMP: f"rw,noexec,nosuid,nodev,size={limits.tmpfs_mb}m,mode=1777"},
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges"],
        "pids_limit": limits.pids,
        "mem_limit": memory,
        "memswap_limit": memory,  # the same figure: no swap on top
        "nano_cpus": int(limits.cpus * 1_000_000_000),
        "ulimits": [
            Ulimit(name="nofile", soft=limits.nofile, hard=limits.nofile),
            Ulimit(name="nproc", soft=limits.nproc, hard=limits.nproc),
            Ulimit(name="fsize", soft=file_size, hard=file_size),
        ],
        "binds": {str(workspace.resolve()): {"bind": MOUNT, "mode": "rw"}},
        "init": True,  # a real init reaps what commands leave behind
        "ipc_mode": "private",
        "auto_remove": False,
    }
