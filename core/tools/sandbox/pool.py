"""A pool of warm, idle sandbox containers: take one, run, clean it, give it back.

Each container is made with the workspace's sensitive files masked (masks.py). The pool
keeps containers for the masks the last scan found; when the scan finds others, the idle
ones go and new ones are made. A run that must see some of them (approved by the owner)
gets a container of its own, removed after it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path
from typing import Any

from core.tools.sandbox.engine import DockerEngine, SandboxUnavailable
from core.tools.sandbox.limits import (
    LABEL,
    MOUNT,
    OWNER_LABEL,
    SandboxLimits,
    container_labels,
    host_config,
    keeper_user,
    owner_tag,
)
from core.tools.sandbox.masks import Masks, StandIns, find_sensitive

log = logging.getLogger(__name__)

ACQUIRE_TIMEOUT = 60.0
IDLE_PIDS = 2  # docker-init and the idle `sleep`: a container with more has leftovers
# Where the engine may keep a container's pids cgroup (v1 or v2, cgroupfs or systemd driver).
PIDS_FILES = (
    "/sys/fs/cgroup/pids/docker/{id}/pids.current",
    "/sys/fs/cgroup/pids/system.slice/docker-{id}.scope/pids.current",
    "/sys/fs/cgroup/system.slice/docker-{id}.scope/pids.current",
    "/sys/fs/cgroup/docker/{id}/pids.current",
)
# Run as the command user after every command: ends whatever it left running. It cannot touch
# the idle process (another uid) nor init, so the container stays up.
CLEANUP = ["/bin/sh", "-c", "kill -9 -1"]


class WarmPool:
    """Keeps `limits.pool_size` idle containers ready; replaces any that misbehaved."""

    def __init__(
        self,
        engine: DockerEngine,
        workspace: Path,
        limits: SandboxLimits,
        command_uid: int,
        stand_ins: StandIns,
    ) -> None:
        self._engine = engine
        self._workspace = workspace
        self._stand_ins = stand_ins
        self._masks = Masks()  # what the last scan found: the idle containers' masks
        self._masks_of: dict[str, Masks] = {}
        self._limits = limits
        self._uid = command_uid
        self._idle: list[str] = []
        self._busy: set[str] = set()
        self._live: set[str] = set()
        self._creating = 0
        self._cleaning = 0
        self._error: SandboxUnavailable | None = None
        self._changed = asyncio.Condition()
        self._tasks: set[asyncio.Task[None]] = set()
        self._started = False
        self._start_lock = asyncio.Lock()
        self._closed = False
        self.launched: list[str] = []  # every container id this pool created (tests inspect them)

    async def start(self) -> None:
        """Remove containers a crashed run left behind, then fill the pool in the background."""
        async with self._start_lock:  # the stale sweep must not meet our own new containers
            if self._started:
                return
            await asyncio.to_thread(self._remove_stale)
            self._masks = await asyncio.to_thread(find_sensitive, self._workspace)
            self._started = True
        self._refill()

    async def acquire(self, reveal: tuple[str, ...] = ()) -> str:
        """An idle container's id, its workspace's sensitive files masked as they are now
        but for those `reveal` names; SandboxUnavailable if none can be made."""
        await self.start()
        found = await asyncio.to_thread(find_sensitive, self._workspace)
        self._track(found)
        masks = found.without(reveal)
        if masks != found:
            return await self._own(masks)
        try:
            async with asyncio.timeout(ACQUIRE_TIMEOUT), self._changed:
                while not self._idle:
                    if self._error is not None and self._creating == 0:
                        error, self._error = self._error, None
                        raise error
                    self._refill()
                    if self._creating == 0 and self._cleaning == 0:
                        self._add()  # every container is busy: one more, trimmed later
                    await self._changed.wait()
                container = self._idle.pop()
        except TimeoutError:
            raise SandboxUnavailable(
                f"no sandbox container became ready within {ACQUIRE_TIMEOUT:g} s"
            ) from None
        self._busy.add(container)
        return container

    async def _own(self, masks: Masks) -> str:
        """A container made now with these masks, for one command (never pooled)."""
        self._creating += 1
        try:
            container = await asyncio.to_thread(self._create_now, masks)
        except SandboxUnavailable:
            raise
        except Exception as exc:  # an engine error, in the owner's words
            raise SandboxUnavailable(f"the sandbox could not start a container: {exc}") from None
        finally:
            self._creating -= 1
        self._busy.add(container)
        return container

    def _track(self, found: Masks) -> None:
        """Take the scan's masks as the pool's: idle containers made for others go."""
        if found == self._masks:
            return
        self._masks = found
        stale = [c for c in self._idle if self._masks_of.get(c) != found]
        self._idle = [c for c in self._idle if c not in stale]
        for container in stale:
            self._live.discard(container)
            self._spawn(self._remove(container))
        self._refill()

    def release(self, container: str) -> None:
        """Give a used container back: cleaned in the background, then idle again (removed
        if it was made for other masks than the pool's)."""
        if self._masks_of.get(container) != self._masks:
            self.discard(container)
            return
        self._busy.discard(container)
        self._cleaning += 1
        self._spawn(self._recycle(container))

    def discard(self, container: str) -> None:
        """Remove a container that timed out or failed; a fresh one replaces it."""
        self._busy.discard(container)
        self._live.discard(container)
        self._spawn(self._remove(container))
        self._refill()

    async def close(self) -> None:
        """Stop refilling, let Docker calls in flight finish, then remove every container.

        Tasks are awaited, not cancelled: a cancelled call would leave its thread creating a
        container nobody removes.
        """
        self._closed = True
        while self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        live, self._live, self._idle = list(self._live), set(), []
        await asyncio.gather(*(asyncio.to_thread(self._remove_now, c) for c in live))

    def _spawn(self, work: Any) -> None:
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _size(self) -> int:
        return len(self._idle) + len(self._busy) + self._creating + self._cleaning

    def _refill(self) -> None:
        if self._closed or not self._started:
            return
        while self._size() < self._limits.pool_size:
            self._add()

    def _add(self) -> None:
        self._creating += 1
        self._spawn(self._create())

    async def _create(self) -> None:
        container: str | None = None
        try:
            container = await asyncio.to_thread(self._create_now, self._masks)
            self._error = None
        except SandboxUnavailable as exc:
            self._error = exc
        except Exception as exc:  # an engine error: report it to waiters, keep running
            log.warning("sandbox container could not start: %s", exc)
            self._error = SandboxUnavailable(f"the sandbox could not start a container: {exc}")
        finally:
            self._creating -= 1
        await self._offer(container)

    async def _offer(self, container: str | None) -> None:
        async with self._changed:
            if container is not None and self._masks_of.get(container) != self._masks:
                self.discard(container)  # the workspace changed while it was made
            elif container is not None and not self._closed:  # if closed, close() removes it
                self._idle.append(container)
            self._changed.notify_all()

    async def _recycle(self, container: str) -> None:
        try:
            await asyncio.to_thread(self._clean_now, container)
        except Exception as exc:
            log.info("sandbox container %s not reusable: %s", container[:12], exc)
            self._cleaning -= 1
            self.discard(container)
            return
        self._cleaning -= 1
        if self._size() >= self._limits.pool_size:  # a burst's extra container: not kept
            self._live.discard(container)
            await self._remove(container)
            return
        await self._offer(container)

    async def _remove(self, container: str) -> None:
        await asyncio.to_thread(self._remove_now, container)

    # --- blocking Docker calls, always run in a thread ---

    def _create_now(self, masks: Masks) -> str:
        self._engine.require_image(self._limits.image)
        api = self._engine.api
        keeper = keeper_user(self._uid)
        hardening = host_config(self._limits, self._workspace)
        hardening["mounts"] = masks.mounts(self._stand_ins)
        created = api.create_container(
            self._limits.image,
            command=["sleep", "infinity"],
            user=f"{keeper}:{keeper}",
            working_dir=MOUNT,
            labels=container_labels(self._workspace),
            host_config=api.create_host_config(**hardening),
            network_disabled=True,
        )
        container: str = created["Id"]
        self._masks_of[container] = masks
        self._live.add(container)
        self.launched.append(container)
        try:
            api.start(container)
        except Exception:
            self._remove_now(container)
            raise
        return container

    def _clean_now(self, container: str) -> None:
        if _process_count(container) == IDLE_PIDS:
            return  # nothing left behind: spare the engine an exec (it slows the next command)
        api = self._engine.api
        run = api.exec_create(container, CLEANUP, user=f"{self._uid}:{self._uid}")
        api.exec_start(run["Id"])
        if not api.inspect_container(container)["State"]["Running"]:
            raise RuntimeError("container stopped")

    def _remove_now(self, container: str) -> None:
        self._live.discard(container)
        self._masks_of.pop(container, None)
        with contextlib.suppress(Exception):
            self._engine.api.remove_container(container, force=True)

    def _remove_stale(self) -> None:
        tag = owner_tag(self._workspace)
        try:
            api = self._engine.api
            labels = [f"{LABEL}=1", f"{OWNER_LABEL}={tag}"]
            stale = api.containers(all=True, filters={"label": labels})
        except Exception as exc:  # nothing to clean now; acquire() reports the engine
            log.info("stale sandbox containers not checked: %s", exc)
            return
        for entry in stale:
            log.info("removing stale sandbox container %s", entry["Id"][:12])
            self._remove_now(entry["Id"])


def _process_count(container: str) -> int | None:
    """How many processes the container holds, read from its cgroup on this host (None when
    the cgroup is not visible here, e.g. when Lancelot itself runs in a container)."""
    for pattern in PIDS_FILES:
        try:
            return int(Path(pattern.format(id=container)).read_text())
        except (OSError, ValueError):
            continue
    return None
