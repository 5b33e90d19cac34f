"""A long-lived program inside the sandbox that speaks over its stdin and stdout (an MCP
server declared with `"sandbox": true`): the `docker run -i` command line that starts it with
the same hardening as the shell's containers (limits.py, host_config), the workspace mounted
as the shell sees it, sensitive files covered by their empty stand-ins (masks.py).

One policy, two spellings: the warm pool hands host_config's keywords to the Docker SDK, this
turns the very same keywords into `docker run` flags, and refuses a keyword it cannot spell,
so a hardening added there is never silently missing here. The masks are those of the
workspace when the program starts: a sensitive file that appears later is covered from its
next start on. The container goes when the program ends (`--rm`).
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.tools.sandbox.engine import DockerEngine, SandboxUnavailable
from core.tools.sandbox.limits import (
    EXEC_ENV,
    MOUNT,
    OWNER_LABEL,
    SandboxLimits,
    command_user,
    host_config,
    let_command_user_write,
    owner_tag,
)
from core.tools.sandbox.masks import Masks, StandIns, find_sensitive

DOCKER = "docker"
LABEL = "lancelot.mcp"  # not the pool's label: its clean-up at start must leave these be
WITH_NETWORK = "bridge"  # the engine's default network, for an entry that allows it


def _flag_values(key: str, value: Any) -> list[str]:
    """The `docker run` flags for one host_config keyword (ValueError for an unknown one)."""
    simple = {
        "network_mode": "--network",
        "pids_limit": "--pids-limit",
        "mem_limit": "--memory",
        "memswap_limit": "--memory-swap",
        "ipc_mode": "--ipc",
    }
    if key in simple:
        return [f"{simple[key]}={value}"]
    if key in ("read_only", "init"):
        return [f"--{key.replace('_', '-')}"] if value else []
    if key == "auto_remove":
        return []  # the program's container is removed when it ends: --rm, always
    if key in ("cap_drop", "security_opt"):
        return [f"--{key.replace('_', '-')}={item}" for item in value]
    if key == "nano_cpus":
        return [f"--cpus={value / 1_000_000_000:g}"]
    if key == "tmpfs":
        return [f"--tmpfs={path}:{options}" for path, options in value.items()]
    if key == "ulimits":
        return [f"--ulimit={u['Name']}={u['Soft']}:{u['Hard']}" for u in value]
    if key == "binds":
        return [f"--volume={host}:{b['bind']}:{b['mode']}" for host, b in value.items()]
    if key == "mounts":
        return [_mount_flag(mount) for mount in value]
    raise ValueError(f"the sandbox's {key!r} has no docker run flag here")


def _mount_flag(mount: dict[str, Any]) -> str:
    """A bind mount (a mask's stand-in) as `--mount`."""
    flag = f"--mount=type={mount['Type']},source={mount['Source']},target={mount['Target']}"
    return flag + (",readonly" if mount.get("ReadOnly") else "")


def run_flags(hardening: dict[str, Any]) -> list[str]:
    """host_config's hardening as `docker run` flags, in its order."""
    return [flag for key, value in hardening.items() for flag in _flag_values(key, value)]


@dataclass(frozen=True, slots=True)
class InteractiveProgram:
    """What to start inside the sandbox: the program, its arguments, the names of the
    variables it gets from the `docker` process's own environment (their values never on a
    command line), and whether it may reach the network."""

    command: str
    args: Sequence[str] = ()
    env_names: Iterable[str] = ()
    network: bool = False


def docker_run(
    program: InteractiveProgram,
    limits: SandboxLimits,
    workspace: Path,
    masks: Masks,
    stand_ins: StandIns,
) -> list[str]:
    """The command line that runs `program` in a fresh hardened container, attached to its
    stdin and stdout, as the shell's commands run: Lancelot's uid, never root, in the
    workspace, no network unless the program's entry allows it."""
    hardening = host_config(limits, workspace)
    hardening["mounts"] = masks.mounts(stand_ins)
    if program.network:
        hardening["network_mode"] = WITH_NETWORK
    uid = command_user()
    plain = [f"--env={name}={value}" for name, value in EXEC_ENV.items()]
    passed = [f"--env={name}" for name in program.env_names]
    return [
        DOCKER, "run", "--interactive", "--rm", f"--user={uid}:{uid}", f"--workdir={MOUNT}",
        f"--label={LABEL}=1", f"--label={OWNER_LABEL}={owner_tag(workspace)}",
        *run_flags(hardening), *plain, *passed,
        limits.image, program.command, *program.args,
    ]  # fmt: skip


class SandboxedPrograms:
    """Starts programs in the sandbox for whoever talks to them over stdio (the MCP
    supervisor): checks that Docker and the image are there, covers the workspace's
    sensitive files as they are now, and gives the command line."""

    def __init__(
        self, engine: DockerEngine, limits: SandboxLimits, workspace: Path, stand_ins: StandIns
    ) -> None:
        self._engine = engine
        self._limits = limits
        self._workspace = workspace
        self._stand_ins = stand_ins

    async def command(self, program: InteractiveProgram) -> list[str]:
        """The command line for `program` (SandboxUnavailable, saying why, when there is no
        sandbox to run it in: it is never run outside it)."""
        if shutil.which(DOCKER) is None:
            raise SandboxUnavailable("the docker command is not installed")
        await asyncio.to_thread(self._engine.require_image, self._limits.image)
        masks = await asyncio.to_thread(self._masks_now)
        return docker_run(program, self._limits, self._workspace, masks, self._stand_ins)

    def _masks_now(self) -> Masks:
        """The workspace's sensitive files now (blocking: a walk of the workspace)."""
        self._workspace.mkdir(parents=True, exist_ok=True)
        let_command_user_write(self._workspace)
        return find_sensitive(self._workspace)
