"""HostShell: runs a command on the host, in the workspace, only when the owner turned it on."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal

from core.errors import ToolUnavailable
from core.features import FeatureFlags
from core.tools.action import ToolAction
from core.tools.base import ToolResult
from core.tools.capability import CapabilityTokens
from core.tools.sandbox.output import OutputSink
from core.tools.workspace import Workspace

TIMED_OUT = 124
FLAG = "TOOLS_HOST_EXECUTION"
OFF = "host execution is off (FEATURE_TOOLS_HOST_EXECUTION)"


class HostShell:
    """A CommandRunner without isolation: `/bin/sh -c` on the host with a timeout that kills
    the whole process group. Refuses unless FEATURE_TOOLS_HOST_EXECUTION is on."""

    name = "host"

    def __init__(
        self,
        workspace: Workspace,
        capabilities: CapabilityTokens,
        features: FeatureFlags,
        timeout: float = 30.0,
    ) -> None:
        self._ws = workspace
        self._capabilities = capabilities
        self._features = features
        self._timeout = timeout

    @property
    def enabled(self) -> bool:
        """Whether the owner allowed host execution (read on every use: SIGHUP may flip it)."""
        return self._features.enabled(FLAG)

    async def health(self) -> str | None:
        """For the router: None when host execution is allowed, else why not."""
        return None if self.enabled else OFF

    async def run(self, action: ToolAction, capability: str | None) -> ToolResult:
        """Run exactly `action` on the host, after checking its capability token and the flag
        (ToolUnavailable while it is off: nothing ran, another provider may)."""
        self._capabilities.check(capability, action.digest)
        reason = await self.health()
        if reason is not None:
            raise ToolUnavailable(reason)
        process = await asyncio.create_subprocess_exec(
            "/bin/sh",
            "-c",
            action.command or "",
            cwd=self._ws.root,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,  # its own process group, so a timeout kills all of it
            env=self._environment(),
        )
        sink = OutputSink()
        try:
            async with asyncio.timeout(self._timeout):
                await self._read(process, sink)
                code = await process.wait()
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            await process.wait()
            text, _ = sink.text()
            note = f"[killed: still running after {self._timeout:g} s]"
            return ToolResult(TIMED_OUT, f"{text}\n{note}".strip(), True)
        text, cut = sink.text()
        return ToolResult(code, text, cut)

    def _environment(self) -> dict[str, str]:
        """A small environment: the process's own may hold tokens a command must not see."""
        path = os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin")
        return {"PATH": path, "HOME": str(self._ws.root), "LANG": "C.UTF-8"}

    @staticmethod
    async def _read(process: asyncio.subprocess.Process, sink: OutputSink) -> None:
        assert process.stdout is not None
        while chunk := await process.stdout.read(65536):
            sink.add(chunk)
            if sink.overflowed:
                raise TimeoutError
