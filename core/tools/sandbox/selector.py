"""Chooses where a shell command runs: the sandbox, SafeREPL while it is down, or the host."""

from __future__ import annotations

import dataclasses

from core.governance.action import ToolAction
from core.governance.capability import CapabilityTokens
from core.tools.base import ToolResult
from core.tools.safe_repl import SafeRepl
from core.tools.sandbox.docker_sandbox import DockerSandbox
from core.tools.sandbox.engine import SandboxUnavailable
from core.tools.sandbox.host import HostShell


class ShellRunner:
    """The CommandRunner the Executor holds for shell commands.

    - `params["host"]`: the host shell, which refuses unless FEATURE_TOOLS_HOST_EXECUTION is on;
    - otherwise the Docker sandbox when it can run commands;
    - otherwise SafeREPL for the commands it implements, saying so in the reply;
    - otherwise a clear failure naming why the sandbox is unavailable.
    The ToolResult names the runner that ran (receipts record it).
    """

    name = "shell"

    def __init__(
        self,
        sandbox: DockerSandbox,
        fallback: SafeRepl,
        host: HostShell,
        capabilities: CapabilityTokens,
    ) -> None:
        self._sandbox = sandbox
        self._fallback = fallback
        self._host = host
        self._capabilities = capabilities

    async def run(self, action: ToolAction, capability: str | None) -> ToolResult:
        """Run exactly `action` where it can run; nothing runs without a matching token."""
        self._capabilities.check(capability, action.digest)
        if action.params.get("host") is True:
            return await self._host.run(action, capability)
        try:
            return await self._sandbox.run(action, capability)
        except SandboxUnavailable as exc:  # the command did not start: it may run elsewhere
            reason = str(exc)
        if not self._fallback.supports(action.command or ""):
            raise SandboxUnavailable(reason)
        result = await self._fallback.run(action, capability)
        note = f"(ran in SafeREPL because the sandbox is unavailable: {reason})"
        output = f"{note}\n{result.output}" if result.output else note
        return dataclasses.replace(result, output=output, runner=self._fallback.name)
