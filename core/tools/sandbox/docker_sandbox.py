"""DockerSandbox: runs a governed shell command in a warm, hardened container."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path
from types import TracebackType
from typing import Any

from core.errors import ToolFailed
from core.tools.action import ToolAction
from core.tools.base import ToolResult
from core.tools.capability import CapabilityTokens
from core.tools.sandbox.engine import DockerEngine, SandboxUnavailable
from core.tools.sandbox.limits import (
    EXEC_ENV,
    MOUNT,
    SandboxLimits,
    command_user,
    let_command_user_write,
)
from core.tools.sandbox.masks import StandIns, revealed
from core.tools.sandbox.output import OutputSink
from core.tools.sandbox.pool import WarmPool
from core.tools.workspace import Workspace

log = logging.getLogger(__name__)

TIMED_OUT = 124  # what timeout(1) answers, so the owner recognises it
KILL_GRACE = 10.0  # how long to wait for the reader once its container is killed


class DockerSandbox:
    """The CommandRunner for shell commands: `/bin/sh -c` inside the sandbox, never the host.

    An async context manager: leaving removes every container. The pool fills at `warm()` or
    at the first command; a down engine only makes commands fail with a clear message.

    The workspace's sensitive files are masked in every container (masks.py), except those an
    action names under `reveal` when its capability was issued on the owner's approval: the
    card that asked named them.
    """

    name = "docker"

    def __init__(
        self,
        engine: DockerEngine,
        workspace: Workspace,
        capabilities: CapabilityTokens,
        limits: SandboxLimits,
        masks_home: Path | None = None,
    ) -> None:
        """`masks_home`: where the empty stand-ins live (outside the workspace, seen by the
        engine at the same path); None: a private temporary folder."""
        self._engine = engine
        self._ws = workspace
        self._capabilities = capabilities
        self.limits = limits
        self._uid = command_user()
        self._stand_ins = StandIns(masks_home)
        self.pool = WarmPool(engine, workspace.root, limits, self._uid, self._stand_ins)
        self._warming: asyncio.Task[None] | None = None
        self._wanted = False  # warmed or asked to run: from then on, health reports on it

    async def __aenter__(self) -> DockerSandbox:
        return self

    def warm(self) -> None:
        """Start filling the pool in the background now, rather than at the first command."""
        self._wanted = True
        if self._warming is None:
            self._warming = asyncio.create_task(self._warm(), name="sandbox-warm")

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._warming is not None:
            self._warming.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._warming
        await self.pool.close()
        await asyncio.to_thread(self._engine.close)
        self._stand_ins.close()

    async def _warm(self) -> None:
        try:
            await self.pool.start()
        except Exception as exc:  # the engine may be down; commands will say so
            log.info("sandbox pool not warmed: %s", exc)

    async def health(self) -> str | None:
        """For the router: None if commands can run in the sandbox now, else why not."""
        return await asyncio.to_thread(self._engine.usable, self.limits.image)

    async def unavailable(self) -> str | None:
        """For health: None if commands can run in the sandbox now (or nothing wanted it yet),
        else the short reason."""
        return await self.health() if self._wanted else None

    async def run(self, action: ToolAction, capability: str | None) -> ToolResult:
        """Run exactly `action` in an idle container, after checking its capability token.

        SandboxUnavailable means the command did not start (a caller may run it elsewhere);
        ToolFailed means the engine went away while it ran.
        """
        self._capabilities.check(capability, action.digest)
        self._wanted = True
        command = action.command or ""
        approved = self._capabilities.approved(capability, action.digest)
        reveal = revealed(action.params) if approved else ()
        self._prepare_workspace()
        for attempt in range(2):
            container = await self.pool.acquire(reveal)
            try:
                return await self._exec(container, command)
            except _NotStarted as exc:
                self.pool.discard(container)
                if attempt:
                    await asyncio.to_thread(self._engine.reset)
                    raise SandboxUnavailable(
                        f"the sandbox could not start the command: {exc}"
                    ) from None
            except _EngineLost as exc:
                self.pool.discard(container)
                await asyncio.to_thread(self._engine.reset)
                raise ToolFailed(
                    f"the sandbox engine stopped answering during the command ({exc})"
                ) from None
        raise AssertionError("unreachable")

    def _prepare_workspace(self) -> None:
        """Let the command user write the workspace root when Lancelot runs as root."""
        let_command_user_write(self._ws.root)

    async def _exec(self, container: str, command: str) -> ToolResult:
        sink = OutputSink()
        reader = asyncio.ensure_future(asyncio.to_thread(self._exec_now, container, command, sink))
        try:
            done, _ = await asyncio.wait({reader}, timeout=self.limits.timeout_seconds)
        except asyncio.CancelledError:  # stopped while it ran: the command goes, with its box
            await asyncio.to_thread(self._kill_now, container)
            self.pool.discard(container)
            raise
        if reader in done and not sink.overflowed:
            exit_code = reader.result()
            self.pool.release(container)
            text, cut = sink.text()
            return ToolResult(exit_code, text, cut)
        # Timed out (or flooding output): the container goes, with every process in it.
        await asyncio.to_thread(self._kill_now, container)
        self.pool.discard(container)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(reader, KILL_GRACE)
        text, _ = sink.text()
        why = (
            f"killed: output passed {sink.total:,} bytes"
            if sink.overflowed
            else f"killed: still running after {self.limits.timeout_seconds:g} s"
        )
        return ToolResult(TIMED_OUT, f"{text}\n[{why}]".strip(), True)

    def _exec_now(self, container: str, command: str, sink: OutputSink) -> int:
        from docker.errors import DockerException
        from docker.utils.socket import frames_iter
        from requests import RequestException

        api: Any = self._engine.api
        uid = f"{self._uid}:{self._uid}"
        try:
            run = api.exec_create(
                container, ["/bin/sh", "-c", command], user=uid, workdir=MOUNT, environment=EXEC_ENV
            )
        except (DockerException, RequestException, OSError) as exc:
            raise _NotStarted(type(exc).__name__) from None
        try:
            # The raw socket rather than the SDK's stream, so it is closed for certain.
            sock = api.exec_start(run["Id"], socket=True)
            try:
                for _, chunk in frames_iter(sock, tty=False):
                    sink.add(chunk)
                    if sink.overflowed:
                        return TIMED_OUT
            finally:
                _close(sock)
            code = api.exec_inspect(run["Id"]).get("ExitCode")
        except (DockerException, RequestException, OSError) as exc:
            raise _EngineLost(type(exc).__name__) from None
        return int(code) if code is not None else TIMED_OUT

    def _kill_now(self, container: str) -> None:
        with contextlib.suppress(Exception):
            self._engine.api.kill(container)


def _close(sock: Any) -> None:
    """Close the exec's socket, the HTTP response around it and the connection beneath it
    (the SDK leaves them to the garbage collector, which warns)."""
    for closable in (getattr(sock, "_response", None), sock, getattr(sock, "_sock", None)):
        if closable is not None:
            with contextlib.suppress(OSError, ValueError):
                closable.close()


class _EngineLost(Exception):
    """The engine stopped answering in the middle of a command."""


class _NotStarted(Exception):
    """The container could not take the command (it died or vanished); use another."""
